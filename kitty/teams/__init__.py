"""One mission across machines: remote claims, leases, sync, liveness."""
