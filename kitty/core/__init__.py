"""Pure core: data in, data out. No files, subprocesses, clocks or environment."""
