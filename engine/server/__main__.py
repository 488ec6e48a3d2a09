"""`python -m engine.server ...` = `sluice-server ...`."""
import sys

from engine.server.main import main

sys.exit(main())
