"""The worker side: the runner that steps one session under a lease, the pools and processes that keep
sessions running, and the fleet that starts them on one machine."""
