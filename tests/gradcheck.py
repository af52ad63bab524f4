"""Central finite differences, shared by the tests of every hand-written backward pass."""

import numpy as np


def central_difference(f, x, i, eps=1e-6) -> float:
    """(f(x + eps e_i) - f(x - eps e_i)) / 2 eps for the scalar f(), perturbing x[i] in place."""
    old = x[i]
    x[i] = old + eps
    up = f()
    x[i] = old - eps
    down = f()
    x[i] = old
    return (up - down) / (2 * eps)


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar f() w.r.t. every entry of x."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        g[i] = central_difference(f, x, i, eps)
    return g


def worst_sampled_error(loss, params: dict, grads: dict, rng, per_tensor: int = 6,
                        eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-8):
    """Compare grads with central differences of loss() at `per_tensor` random entries of
    every parameter tensor; returns (worst error / tolerance, where it was) so a failing
    assert prints the entry and both values. atol covers entries whose true gradient is 0."""
    worst = (0.0, "")
    for name, p in params.items():
        flat, g = p.reshape(-1), grads[name].reshape(-1)
        for i in rng.choice(flat.size, size=min(per_tensor, flat.size), replace=False):
            num = central_difference(loss, flat, i, eps)
            ratio = abs(num - g[i]) / (atol + rtol * abs(num))
            worst = max(worst, (ratio, f"{name}[{i}]: numeric {num:.10g} analytic {g[i]:.10g}"))
    return worst


def perturbed(model, seed: int):
    """`model` with every parameter moved by N(0, 0.3), in place (seeded): gradients are then
    checked away from the init's zeros and ones, where a wrong term can hide."""
    rng = np.random.default_rng(seed)
    for p in model.params.values():
        p += rng.normal(0.0, 0.3, size=p.shape)
    return model
