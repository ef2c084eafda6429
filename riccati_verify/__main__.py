from riccati_verify.app.cli import main

raise SystemExit(main())
