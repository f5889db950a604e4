"""A run across legs: host, lifecycle, parked runs, leases, replay, decisions."""
