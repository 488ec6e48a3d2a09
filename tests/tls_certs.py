"""A test CA and certificates made with openssl, for servers and clients speaking TLS:
the CA, a server certificate for 127.0.0.1/localhost, a client certificate, an expired
client certificate, and a second CA with a server and a client certificate of its own
(the ones a server or client trusting the first CA refuses).

    certs = make_certs(tmp_path)
    redis.Redis(port=p, **certs.client_options())
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

DAYS = "2"


@dataclass(frozen=True)
class TestCerts:
    """Paths of the files make_certs wrote (PEM)."""

    __test__ = False    # not a test class for pytest

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    expired_cert: Path          # the client's key, signed by ca, expired yesterday
    other_ca: Path
    other_server_cert: Path     # signed by other_ca, for 127.0.0.1 too
    other_server_key: Path
    other_client_cert: Path     # the client's key, signed by other_ca

    def server_args(self) -> list:
        """The tls-* arguments of a server using them (clients must show a certificate)."""
        return ["--tls-cert-file", str(self.server_cert), "--tls-key-file", str(self.server_key),
                "--tls-ca-cert-file", str(self.ca)]

    def client_options(self, cert: Path | None = None, ca: Path | None = None) -> dict:
        """redis.Redis's options for a client trusting `ca` (default: ours) and showing
        `cert` (default: the client certificate) with the client's key."""
        return {"ssl": True, "ssl_ca_certs": str(ca or self.ca),
                "ssl_certfile": str(cert or self.client_cert),
                "ssl_keyfile": str(self.client_key)}

    def cli_args(self, cert: Path | None = None, ca: Path | None = None) -> list:
        """redis-cli's arguments for the same client."""
        return ["--tls", "--cacert", str(ca or self.ca), "--cert", str(cert or self.client_cert),
                "--key", str(self.client_key)]


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def _sign(directory: Path, name: str, key: Path, ca: str, days: str, ext: str = "") -> Path:
    csr, cert = directory / f"{name}.csr", directory / f"{name}.crt"
    _openssl("req", "-new", "-key", str(key), "-out", str(csr), "-subj", f"/CN={name}")
    extra = []
    if ext:
        ext_file = directory / f"{name}.ext"
        ext_file.write_text(ext + "\n")
        extra = ["-extfile", str(ext_file)]
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(directory / f"{ca}.crt"),
             "-CAkey", str(directory / f"{ca}.key"), "-CAcreateserial", "-out", str(cert),
             "-days", days, *extra)
    return cert


def make_certs(directory: Path) -> TestCerts:
    """Writes the certificates into `directory` (openssl must be installed)."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test certificates", pytrace=False)
    directory.mkdir(parents=True, exist_ok=True)
    for ca in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                 str(directory / f"{ca}.key"), "-out", str(directory / f"{ca}.crt"),
                 "-days", DAYS, "-subj", f"/CN=Sluice test {ca}")
    keys = {}
    for name in ("server", "client"):
        keys[name] = directory / f"{name}.key"
        _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                 "-out", str(keys[name]))
    san = "subjectAltName=IP:127.0.0.1,DNS:localhost"
    return TestCerts(
        ca=directory / "ca.crt",
        server_cert=_sign(directory, "server", keys["server"], "ca", DAYS, san),
        server_key=keys["server"],
        client_cert=_sign(directory, "client", keys["client"], "ca", DAYS),
        client_key=keys["client"],
        expired_cert=_sign(directory, "expired", keys["client"], "ca", "-1"),
        other_ca=directory / "other-ca.crt",
        other_server_cert=_sign(directory, "other-server", keys["server"], "other-ca", DAYS,
                                san),
        other_server_key=keys["server"],
        other_client_cert=_sign(directory, "other-client", keys["client"], "other-ca", DAYS))
