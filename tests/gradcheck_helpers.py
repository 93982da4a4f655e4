"""Shared helpers of the gradient tests."""
import numpy as np

# The numerical side runs in extended precision where the platform has it
# (x86-64: 80-bit long double), so that float64 roundoff in deep rollouts does
# not hide behind the 1e-6 bar; the analytic gradients are float64.
EXTENDED = np.longdouble if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps else np.float64
H_STEP = 1e-6 if EXTENDED is not np.float64 else 1e-5
