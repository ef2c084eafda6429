"""`riccati-verify simulate` end to end: JSON keys, modes, bounds, bad input, blow-up."""

import json

import pytest

P = {"A": [["-3/10", "1/10"], [0, "-1/5"]], "B": [["1/5", 0], ["1/10", "-3/10"]],
     "V": [["1/2", 0], ["1/5", "2/5"]], "b": ["1/10", 0], "mean": ["1/2", "-1/5"], "cov": [[1, "1/5"], ["1/5", "1/2"]]}
KEYS = {"mean", "cov", "predicted_mean", "predicted_cov", "error_mean", "error_cov", "ess_min", "seed"}


def _json(res):
    assert res.returncode in (0, 1), res.stderr
    return json.loads(res.stdout)


def test_plain_run_json_and_seed(cli, write_json):
    f = write_json(P)
    out = _json(cli("simulate", f, "--tokens", 200, "--time", 0.3, "--steps", 3, "--seed", 11, "--json", "--quiet"))
    assert KEYS <= set(out) and out["seed"] == 11 and out["blowup"] is False
    again = _json(cli("simulate", f, "--tokens", 200, "--time", 0.3, "--steps", 3, "--seed", 11, "--json", "--quiet"))
    assert again["mean"] == out["mean"]
    assert out["error_mean"] <= 4 * out["stderr_mean"]
    assert out["stderr_mean"] >= out["stderr_mean_propagated"] > 0


def test_modes_run(cli, write_json, tmp_path):
    f = write_json(P)
    heads = _json(cli("simulate", f, "-N", 150, "-T", 0.2, "--steps", 2, "--heads", 3, "--head-spread", 0.2,
                      "--json", "--quiet"))
    assert heads["heads"] == 3 and "predicted_cov_head_limit" in heads and KEYS <= set(heads)
    noise = _json(cli("simulate", f, "-N", 150, "-T", 0.2, "--steps", 20, "--noise", 0.5, "--json", "--quiet"))
    assert noise["noise"] == 0.5 and "pathwise_rate" in noise and KEYS <= set(noise)
    relu = _json(cli("simulate", f, "-N", 150, "-T", 0.2, "--steps", 2, "--activation", "relu", "--json", "--quiet"))
    assert "mardia_b1_pvalue" in relu and relu["agree"] is None
    mix = write_json({"weights": ["1/2", "1/2"], "means": [[1, 0], [-1, 0]],
                      "covs": [[["1/4", 0], [0, "1/4"]], [["1/4", 0], [0, "1/4"]]]}, "mix.json")
    m = _json(cli("simulate", f, "-N", 150, "-T", 0.2, "--steps", 2, "--mixture", mix, "--json", "--quiet"))
    assert len(m["component_skewness_T"]) == 2 and m["seed"] == 0
    png = tmp_path / "plot.png"
    res = cli("simulate", f, "-N", 100, "-T", 0.2, "--steps", 2, "--plot", png, "--quiet")
    assert res.returncode == 0 and png.stat().st_size > 1000


@pytest.mark.parametrize("args,needle", [
    (["--tokens", 10**7, "--time", 1], "outside the allowed range"),
    (["--tokens", 100, "--time", -1], "positive"),
    (["--tokens", 100, "--time", 1, "--heads", 0], "outside the allowed range"),
    (["--tokens", 100, "--time", 1, "--steps", 0], "outside the allowed range"),
    (["--tokens", 100, "--time", 1, "--noise", -1], "--noise"),
    (["--tokens", 100, "--time", 1, "--activation", "tanh"], "invalid choice"),
    (["--tokens", 200000, "--time", 10, "--steps", 1000], "flops"),
    (["--tokens", 100, "--time", 1, "--heads", 2, "--noise", 1], "cannot be combined"),
])
def test_bad_input_exit_2_one_line(write_json, capsys, args, needle):
    # in-process (the subprocess route is covered above): same parser, same error path
    code, err = _main(["simulate", str(write_json(P)), *map(str, args)], capsys)
    assert code == 2
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_mixture_file(write_json, capsys):
    f = write_json(P)
    bad = write_json({"weights": ["1/2", "1/3"], "means": [[1, 0], [-1, 0]], "covs": [[[1, 0], [0, 1]]] * 2}, "m.json")
    code, err = _main(["simulate", str(f), "-N", "50", "-T", "0.1", "--mixture", str(bad)], capsys)
    assert code == 2 and "sum exactly to 1" in err


def _main(argv, capsys):
    from riccati_verify.app.cli import main
    try:
        code = main(argv)
    except SystemExit as e:          # argparse usage errors exit directly
        code = e.code
    return code, capsys.readouterr().err


def test_blowup_exit_1_with_time(cli, write_json):
    f = write_json({"A": [[5]], "B": [[0]], "V": [[0]], "mean": [0], "cov": [[1]]})
    res = cli("simulate", f, "-N", 50, "-T", 6, "--steps", 600, "--json", "--quiet")
    assert res.returncode == 1
    out = json.loads(res.stdout)
    assert out["blowup"] and out["blowup_interval"][0] < 6 and "between t =" in out["reason"]
