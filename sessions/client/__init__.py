"""The client side: what the console and the CLI use to start, watch and command sessions."""
