"""The Flex-Act paper's published numbers: the only hand-typed numbers of the study.

Source: R. Kumar, K. Ritscher, J. Zhu, L. Liu, C.-J. Hsieh, "Flex-Act: Why Learn when you can Pick?",
arXiv 2601.06441 (full text: /work/shared/seeds/001_*.txt). Table 1 (§4.1.1, MSE mean ± std over 5
seeds), Table 4 (App. B, Sigmoid ground truth, mean over 3 seeds), the App. B text (alpha = 0 routing
distribution) and Table 6 (App. D.8, Sigmoid ground truth). They appear in the report only in columns
labelled "paper".
"""

from __future__ import annotations

GROUND_TRUTHS: tuple[str, ...] = ("relu", "sigmoid", "tanh", "leaky_relu", "identity")

# Table 1: row -> ground truth -> (mean, std). Rows: Flex-Act at alpha 0.3 / 0, then the fixed networks.
TABLE1: dict[str, dict[str, tuple[float, float]]] = {
    "flexact a=0.3": {
        "relu": (0.0001, 0.0002),
        "sigmoid": (0.0011, 0.0006),
        "tanh": (0.0001, 0.0002),
        "leaky_relu": (0.0001, 0.0002),
        "identity": (0.0000, 0.0000),
    },
    "flexact a=0": {
        "relu": (0.0001, 0.0001),
        "sigmoid": (0.0059, 0.0073),
        "tanh": (0.0021, 0.0028),
        "leaky_relu": (0.0001, 0.0002),
        "identity": (0.0000, 0.0000),
    },
    "fixed relu": {
        "relu": (0.0000, 0.0000),
        "sigmoid": (0.0059, 0.0072),
        "tanh": (0.4328, 0.4287),
        "leaky_relu": (0.0004, 0.0007),
        "identity": (4.1675, 6.7199),
    },
    "fixed sigmoid": {
        "relu": (2.1360, 3.9912),
        "sigmoid": (0.0000, 0.0000),
        "tanh": (0.4020, 0.4536),
        "leaky_relu": (2.1365, 3.9910),
        "identity": (6.3056, 6.5772),
    },
    "fixed tanh": {
        "relu": (2.2941, 3.9616),
        "sigmoid": (0.0141, 0.0119),
        "tanh": (0.0000, 0.0000),
        "leaky_relu": (2.2909, 3.9623),
        "identity": (4.2737, 4.7666),
    },
    "fixed leaky_relu": {
        "relu": (0.0004, 0.0007),
        "sigmoid": (0.0059, 0.0072),
        "tanh": (0.4286, 0.4227),
        "leaky_relu": (0.0000, 0.0000),
        "identity": (4.0787, 6.5640),
    },
    "fixed identity": {
        "relu": (0.5209, 0.4659),
        "sigmoid": (0.0078, 0.0061),
        "tanh": (0.0985, 0.0798),
        "leaky_relu": (0.5105, 0.4566),
        "identity": (0.0000, 0.0000),
    },
}
TABLE1_SEEDS = 5

# Table 4 (App. B): alpha -> (MSE, selected activation as printed); Sigmoid ground truth, 3 seeds, 100 epochs.
APPENDIX_B: dict[float, tuple[float, str]] = {
    0.0: (60.0e-4, "diffuse (ReLU + LeakyReLU dominant)"),
    0.1: (16.0e-4, "sigmoid"),
    0.2: (7.0e-4, "sigmoid"),
    0.3: (3.0e-4, "sigmoid"),
    0.4: (2.0e-4, "sigmoid"),
    0.5: (2.0e-4, "sigmoid"),
    0.6: (2.0e-4, "sigmoid"),
    0.7: (2.0e-4, "sigmoid"),
    0.8: (2.0e-4, "sigmoid"),
    0.9: (2.0e-4, "sigmoid"),
    1.0: (2.0e-4, "sigmoid"),
}
APPENDIX_B_SEEDS = 3
APPENDIX_B_EPOCHS = 100
# App. B text: the alpha = 0 routing distribution, and the probability of Sigmoid for alpha >= 0.1.
APPENDIX_B_ALPHA0_ROUTING: dict[str, float] = {
    "relu": 0.33,
    "leaky_relu": 0.32,
    "sigmoid": 0.10,
    "tanh": 0.11,
    "identity": 0.13,
}
APPENDIX_B_SIGMOID_PROB = 1.00
APPENDIX_B_PLATEAU_FROM = 0.4  # "MSE falls to 2e-4 at alpha = 0.4 and stays there up to 1.0"

# Table 6 (App. D.8): strategy -> (MSE mean, std), Sigmoid ground truth.
TABLE6: dict[str, tuple[float, float]] = {
    "no_correction": (0.00590, 0.00000),
    "logit_clip": (0.00590, 0.00000),
    "kl_clipped_norms": (0.04235, 0.00078),
    "output_norm": (0.35629, 0.00938),
    "kl_grad_norm": (0.00110, 0.00060),
}
PAPER_ALPHA = 0.3  # "We use alpha = 0.3 throughout the main experiments" (App. B)
PAPER_K = 5.0  # §4.1: "k ... we arbitrarily set to 5"
