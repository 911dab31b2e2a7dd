"""io: the edges. Files, HTTP and input sources; the only layer that does I/O."""
