"""The console's views; each reads snapshots and writes commands, never the tree."""
