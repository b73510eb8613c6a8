"""Analytics: metric snapshots of published targets, their polling, and the attributed
performance report of `GET /api/v1/analytics` (contract section 9)."""
