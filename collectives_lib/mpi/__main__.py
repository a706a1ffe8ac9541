"""``python -m collectives_lib.mpi ...``: the same as ``python -m collectives_lib run ...``.

The launcher also starts every MPI process this way (``--payload FILE``)."""

import sys

from collectives_lib.mpi import main_run

sys.exit(main_run(sys.argv[1:]))
