"""One module per subcommand; see `riccati_verify.cli`."""
