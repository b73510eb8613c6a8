"""Safe outbound HTTP: destination rules, address vetting and a transport pinned to the vetted
address. Webhook deliveries and provider API calls both go through it."""
