"""The error every stack-config reader raises, apart so the I/O edges (zone discovery) can raise
it without importing the config reader."""


class ConfigError(ValueError):
    """A stack config that must not be deployed; the message names the key and the fix."""
