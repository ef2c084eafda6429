"""Particle simulators that cross-check the Gaussian moment theory.

attention   blocked log-sum-exp softmax attention with per-query effective sample size
particles   the N-token system, RK4 / Heun / Euler, time-varying parameters, blow-up detection
heads       multi-head attention, head-limit velocity error, multi-head moment ODE
noise       common-noise SDE (Euler–Maruyama, Milstein; Itô / Stratonovich), moment SDE along a path
relu        ReLU feed-forward and the deviation from the moment-matched Gaussian
mixture     Gaussian-mixture inputs: component cumulants, two-component fits
rates       power-law rate fits with confidence intervals, sliced W2 to a Gaussian
compare     `simulate_tokens`: N tokens against the moment prediction, the particle-agreement verdict
"""

from riccati_verify.numeric.simulate.attention import MAX_TOKENS, attention
from riccati_verify.numeric.simulate.particles import HeadSet, ParticleResult, TransformerDrift, integrate_particles, sample_gaussian, simulate

__all__ = ["MAX_TOKENS", "attention", "HeadSet", "ParticleResult", "TransformerDrift",
           "integrate_particles", "sample_gaussian", "simulate"]
