"""The errors of an MPI run (both are :class:`~collectives_lib.errors.CollectivesError`)."""

from ..errors import CollectivesError


class MPIUnavailable(CollectivesError):
    """mpi4py or mpiexec is missing: the message says what to install."""


class MPIRunError(CollectivesError):
    """The MPI run failed, hung past its timeout, was stopped, or a rank raised an error."""
