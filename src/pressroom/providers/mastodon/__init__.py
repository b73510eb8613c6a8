"""Mastodon: any instance, an access token per channel (OAuth or given by an operator)."""
