"""Section 2.3 read line by line (issue 24): the diffusion defaults the page quotes are the pipelines' own."""

from __future__ import annotations


import inspect

from _oracles import require

from chapter2 import diffusion


def test_flux_dev_defaults_to_28_steps_as_diffusers_flux_pipeline_does():
    """diffusers' FluxPipeline.__call__ defaults num_inference_steps to 28 (not the 50 of Qwen-Image's pipeline)."""
    diffusers = require("diffusers")
    default = inspect.signature(diffusers.FluxPipeline.__call__).parameters["num_inference_steps"].default
    assert default == 28
    assert diffusion.MODELS["FLUX.1-dev"].default_steps == default


def test_flux_dev_default_steps_is_the_pipelines_28():
    """The same check without diffusers installed: FluxPipeline.__call__(num_inference_steps: int = 28, ...),
    diffusers 0.42.1, src/diffusers/pipelines/flux/pipeline_flux.py."""
    assert diffusion.MODELS["FLUX.1-dev"].default_steps == 28
