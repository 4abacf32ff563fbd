"""The error of the process tier: a stack that could not be started or answered wrongly."""


class VerifyError(RuntimeError):
    """The local cluster could not be started or answered wrongly; the message says why."""
