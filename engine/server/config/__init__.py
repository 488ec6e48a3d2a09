"""Server configuration: redis.conf files, the command line, CONFIG GET/SET/RESETSTAT/REWRITE.

Everything a Redis tool can observe follows redis-server 7.0 (checked against a real server by
tests/server/test_config.py): the file syntax, the way ``--directive value`` arguments are
merged, the fatal start-up report, the CONFIG replies and error texts, value formatting and
CONFIG REWRITE.

The modules, from the bottom up
-------------------------------
* ``version``: the program name and version (--version, the fatal report, INFO).
* ``errors``: refused values, listener vetoes, fatal start-up errors and where a line came from.
* ``value_parsing``: Redis's integer and memory-size parsers, byte for byte.
* ``keyspace_events``: the notify-keyspace-events bits and letters.
* ``kinds``: how each type of value parses, shows and rewrites.
* ``directives``: the table of directives.
* ``command_line``: ``sluice-server [file] [--directive value ...] [-]`` taken apart.
* ``config_file``: redis.conf files read (with include) and written back (CONFIG REWRITE).
* ``server_config``: ServerConfig, the values and CONFIG SET's all-or-nothing changes.
* ``config_command``: the CONFIG command's replies.

The words of a line are split and quoted by ``engine.resp.args`` (shared with the AOF manifest).

How the server uses it
----------------------
::

    from engine.server.config.command_line import usage
    from engine.server.config.errors import ConfigError
    from engine.server.config.server_config import ServerConfig
    from engine.server.config.version import version_text

    cfg = ServerConfig()
    try:
        cmdline = cfg.apply_args(sys.argv[1:])   # [config-file] [--directive value ...] [-]
    except ConfigError as err:
        sys.stderr.write(err.report())           # Redis-style "*** FATAL CONFIG FILE ERROR" text
        sys.exit(1)
    if cmdline.action == "version": print(version_text()); sys.exit(0)
    if cmdline.action == "help": sys.stderr.write(usage()); sys.exit(1)
    os.chdir(cfg.dir)                            # like redis-server (ServerConfig never chdirs)
    engine = Engine(databases=cfg.databases,
                    stream_node_max_entries=cfg.stream_node_max_entries,
                    stream_node_max_bytes=cfg.stream_node_max_bytes)
    cfg.add_listener("stream-node-max-entries", lambda name, old, new: ...)
    cfg.add_resetstat_hook(stats.reset)
    # command table: CONFIG -> config_command.config_command(cfg, argv, resp3=ctx.resp3)

Values are typed (``cfg.port`` is an int, ``cfg.save`` a list of (seconds, changes), ``cfg.bind``
a list of str, ``cfg.notify_keyspace_events`` the NOTIFY_* bit set, ...); ``cfg["port"]`` and
``cfg.get("port")`` work too.  Strings are str decoded with surrogateescape (bytes round-trip).

Listeners run only for CONFIG SET (``ServerConfig.set``/``set_many``), never while loading the
configuration at start-up, and only for directives whose value really changed.  A listener is
``callback(name, old_value, new_value)``; raising ``ConfigApplyError("text")`` (or any exception)
vetoes the change: every value of that CONFIG SET is restored, listeners that already ran are
called again with (name, new, old), and the client gets
``ERR CONFIG SET failed (possibly related to argument '<name>') - text`` -- the same all-or-nothing
contract as Redis's apply functions (e.g. "Unable to listen on this port. Check server logs.").

Deliberate differences from redis-server 7.0 (all tested)
---------------------------------------------------------
* Only the directives in ``DIRECTIVES`` exist; anything else is "Bad directive" at start-up and
  "Unknown option" for CONFIG SET, and CONFIG GET * lists only these.
* ``loglevel nothing`` is accepted (Redis 7.2+), so the enum error lists it too.
* ``maxmemory`` compares with Sluice's own ``used_memory`` (the stored data's cost, not the
  allocator's total as Redis's ``zmalloc_used_memory``).
* ``daemonize yes`` is refused: sluice-server always runs in the foreground.
* Default ``bind`` is ``127.0.0.1 -::1`` (what the redis.conf shipped with Redis sets) instead of
  the compiled-in ``* -::*``.
* ``dir`` does not chdir: the value is checked (same strerror texts), resolved like chdir would
  (relative to the current ``dir``) and stored; relative ``include`` paths are resolved against it
  too, which is where Redis's chdir makes them land.
* CONFIG GET lists matches in table order (Redis: hash order, i.e. unspecified).
* CONFIG REWRITE appends missing lines in table order and writes ``requirepass`` itself (Redis 7
  also appends ACL ``user`` and ``latency-tracking-info-percentiles`` lines).
* Memory values that overflow once multiplied by their unit saturate at 2**64-1 like the newest
  Redis (redis/redis#15390) instead of wrapping around like 7.0.
* Fatal errors name the file (or stdin / the command-line argument) and the line inside it;
  Redis only gives a line number in the concatenation of file, stdin and arguments.
"""
