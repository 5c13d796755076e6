"""snippets/swiglu_ffn.py states where d_ff comes from, and asserts it.

The 8/3 rule is the SwiGLU paper's and the original LLaMA's (Shazeer 2020, arXiv:2002.05202; Touvron et al.
2023, arXiv:2302.13971: "2/3 4d instead of 4d"), rounded up to a multiple of 256 in LLaMA 1 (LLaMA-7B's
params.json: dim 4096, multiple_of 256 -> 11,008). Llama 3 8B's params.json adds ffn_dim_multiplier 1.3 and
multiple_of 1024, which gives 14,336 = 3.5 x 4,096 (Llama 3.1 8B's config.json intermediate_size).
"""

import dataclasses
import json
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = ROOT / "snippets" / "swiglu_ffn.py"
LLAMA = json.loads((ROOT / "src" / "chapter2" / "data" / "configs" / "Llama-3.1-8B.json").read_text())


def test_llama_width_is_not_called_8_3():
    """Llama 3.1 8B's d_ff is 3.5 x d_model, not 'near 8/3': the snippet must not say Llama keeps 8/3."""
    assert LLAMA["intermediate_size"] / LLAMA["hidden_size"] == 3.5
    text = SNIPPET.read_text()
    assert "Llama keeps d_ff near 8/3" not in text
    assert "8/3" in text and "Shazeer 2020" in text and "multiple of 256" in text
    assert "ffn_dim_multiplier 1.3" in text and "multiple of 1024" in text and "3.5 x d_model" in text


def test_the_width_rule_reproduces_published_sizes():
    ns = runpy.run_path(str(SNIPPET), run_name="__main__")
    rule = ns["llama_d_ff"]
    # int(2 * 4 * 4096 / 3) = 10,922 -> 11,008 (43 x 256); x 1.3 = 14,198 -> 14,336 (14 x 1024)
    assert rule(4096, 256) == 43 * 256 == 11008
    assert rule(4096, 1024, 1.3) == 14 * 1024 == LLAMA["intermediate_size"]
    assert ns["d_ff"] == 172  # int(512 / 3) = 170, rounded up to a multiple of 4


def test_the_width_assert_bites(monkeypatch):
    """With a config whose intermediate_size is not Llama 3.1 8B's, the snippet's own assert raises."""
    import chapter2.models as models

    real = models.load_config

    def wrong(name):
        c = real(name)
        return dataclasses.replace(c, intermediate_size=c.intermediate_size + 256)

    monkeypatch.setattr(models, "load_config", wrong)
    with pytest.raises(AssertionError, match="intermediate_size") as caught:
        runpy.run_path(str(SNIPPET), run_name="__main__")
    assert Path(caught.traceback[-1].path) == SNIPPET
