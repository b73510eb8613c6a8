"""Prometheus instruments every part of Pressroom records into, and the request middleware.

This package knows no domain: publishing, webhooks, media and the worker runner call its
functions with plain values (a network name, an error code, seconds); `pressroom.scrape`
serves the registry at `/metrics`. Label values are only ever drawn from bounded sets the
code defines (operation ids, route templates, statuses, networks, error codes, loop names):
never organizations, ids of users' objects or secrets."""
