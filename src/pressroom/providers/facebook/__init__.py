"""Facebook Pages: what it accepts (declaration.py); no adapter in this deployment yet."""
