"""The constants both kernel sets share.

GELU's Phi(x) = (1 + erf(x / sqrt 2)) / 2 takes erf from Abramowitz & Stegun's formula
7.1.26, erfc(z) = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-z^2), t = 1 / (1 + p z),
for z >= 0, whose error is at most 1.5e-7: below float32's resolution near Phi = 1 and a
vectorizable polynomial instead of erf's branches (the formula PyTorch's vectorized CPU
GELU uses too). For x < 0, Phi(x) = erfc(|x| / sqrt 2) / 2 directly, with no cancellation.
"""

import math

AS_P = 0.3275911
AS_A1 = 0.254829592
AS_A2 = -0.284496736
AS_A3 = 1.421413741
AS_A4 = -1.453152027
AS_A5 = 1.061405429
INV_SQRT2 = 1 / math.sqrt(2)
INV_SQRT2PI = 1 / math.sqrt(2 * math.pi)
