"""``python -m collectives_lib.mpi ...``: the command line's ``run`` verb
(:func:`collectives_lib.mpi.cli.run_main`), with the same options.

The launcher starts every MPI process this way too (``--payload FILE``). This
entry point is never imported by the package, so the package does not depend
on the command line.
"""

import sys

from collectives_lib.mpi.cli import run_main

sys.exit(run_main(sys.argv[1:], prog="python -m collectives_lib.mpi"))
