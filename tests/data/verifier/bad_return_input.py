# Broken: returns its input as the output (right values for `x * 1`, but aliased).
def triton_fused_operator(x):
    return [x]
