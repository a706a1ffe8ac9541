"""``python -m collectives_lib``: the command line (see :mod:`collectives_lib.cli`)."""

import sys

from .cli import main

sys.exit(main(prog="python -m collectives_lib"))
