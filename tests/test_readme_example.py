from hypothesis import given
from riccati_verify.numeric import flow
from riccati_verify.testing import strategies as rst
from riccati_verify.testing import check_moment_ode

def test_moment_ode_in_my_regime():
    check_moment_ode(rst.params(2, signs="opposite", scalar_V=True))

@given(rst.params(2, signs="opposite", scalar_V=True, A_spectrum="anti_hurwitz"), rst.gaussians(2))
def test_opposite_signs_never_blow_up(p, g):
    assert not flow.integrate_moments(p, g, time=5.0).blowup
