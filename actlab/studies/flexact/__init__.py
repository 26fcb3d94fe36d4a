"""The Flex-Act study (issues F and I): synthetic ground-truth recovery, App. B, Table 6, scale bias, prior.

Modules: `arms` (the configurations a run trains, Table 6's strategies), `data` (y = a(k x_1) on
shared inputs), `fleet` (many small Flex-Act networks as one batched module), `run` (what one
run of `notebooks/flexact/run_synthetic.ipynb` trains and records), `analysis` (loading, cells with
CIs, selection accuracy, Table 1), `appendix` (App. B and Table 6), `scale` (the scale-bias regression and Cor. D.3),
`prior` (issue I: alpha x lambda x ground truth), `narrative` (the report's sentences, written
from the numbers), `paper` (the paper's published numbers, the only typed ones), `plots`.
"""
