"""The subcommands of `memgui`, one module per group; each registers its own with `@command`."""
