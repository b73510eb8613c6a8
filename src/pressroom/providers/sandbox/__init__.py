"""The sandbox: a simulated network, and the publisher of every `--simulated` channel."""
