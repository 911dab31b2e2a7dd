"""core: the pure protocol logic. Never opens a file or a socket, never reads the clock."""
