"""One module per subcommand; see `riccati_verify.app.cli`.

`COMMANDS` names every subcommand with its one-line help, so that the command
line can list them all and import only the one that runs (fast start-up: the
numerical libraries load only when a command needs them).  A module
`<name>.py` here defines NAME, HELP = COMMANDS[NAME], `add_arguments(parser)`
and `run(args) -> int`.
"""

__all__ = ["COMMANDS"]

COMMANDS = {
    "blowup": "certified enclosure [lower, upper] of the covariance blow-up time T*, or a proof of no blow-up",
    "check": "classify the regime (equilibrium/blowup/collapse/growth), check theorem hypotheses, write a certificate",
    "derive": "derive the Gaussian moment ODE symbolically and check it against eq. 1.1",
    "equilibrium": "equilibria of F(S) = AS + SA^T + VSBS + SB^TSV^T: exact where possible, verified enclosures otherwise",
    "family": "certify a regime (and the sign regime of V, B) for every member of a box of interval parameters",
    "flow": "integrate the Gaussian moment ODE; report blow-up if it happens first",
    "hypotheses": "check each hypothesis of a theorem in proofs/ on the given parameters (exit 0 all hold, 1 one fails)",
    "pretrained": ("inject Gaussian hidden states past the embeddings of a local pretrained encoder and measure "
        "per-layer Gaussianity (needs the [pretrained] extra)"),
    "prove": "run the proofs/ checks (one per theorem) and print the verdict table; --report DIR adds plots",
    "reach": "controls that steer the Gaussian in PARAMS to a target Gaussian, or a certificate that none exist",
    "simulate": "N-token particle simulation (heads, common noise, ReLU, mixtures) against the moment prediction",
    "sweep": "regime classification over a grid or random family (Dask; resumable CSV; closed-form comparison)",
    "train": "mean-field Langevin training of the head measure (shallow convex step or deep moment flow), seeded",
    "verify": "re-check a certificate independently (exit 0 valid, 1 invalid)",
}
