#!/usr/bin/python3
"""Writes the tiny TorchScript fixtures the TorchScript backend tests load.

Run with Debian's python (python3-torch), from anywhere:

    /usr/bin/python3 src/engine/torch/testdata/make_fixtures.py

Weights are small integers so the tests can compute every expected value exactly in C++.

  linear.pt         y = x @ W.T + b, x FP32 [N,4] -> y FP32 [N,3]; signature extra file
                    (inputs "x" [-1,4], outputs "y" [-1,3]).
  linear_bare.pt    the same module without a signature file.
  add_sub.pt        forward(a, b) -> (a + b, a - b), INT32; no signature file (configs declare
                    INPUT__0/INPUT__1 or the argument names a/b).
  scaled.pt         forward(x, scale: float = 2.0) -> x * scale; an argument with a default.
  masked.pt         forward(x, mask: Optional[Tensor] = None) -> x * mask, or x + 100 without
                    a mask; FP32 (a config may declare `mask` optional).
  identity.pt       forward(x) -> x (the output aliases the input).
  transposed.pt     forward(x) -> a non-contiguous view equal to x + 1.
  returns_int.pt    forward(x) -> int (not servable).
  returns_list.pt   forward(x) -> [x, x] as List[Tensor] (count known only at run time).
  raises.pt         forward(x) raises when x holds a negative value.
  bad_signature.pt  linear with a signature file that is not valid JSON.
  state_dict.pt     torch.save of linear's state dict: a zip, but not TorchScript.
"""

import json
import os
import sys
from typing import List, Optional

# TorchScript serializes some sets in hash order; a fixed hash seed makes the saved files
# byte-for-byte reproducible, so regenerating them leaves git clean.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch  # noqa: E402  (after the re-exec)
from torch import nn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SIGNATURE_FILE = "brigade/signature.json"


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 3)
        with torch.no_grad():
            self.linear.weight.copy_(torch.tensor([[1.0, 0.0, 0.0, 0.0],
                                                   [0.0, 2.0, 0.0, 0.0],
                                                   [1.0, 1.0, 1.0, 1.0]]))
            self.linear.bias.copy_(torch.tensor([0.0, 1.0, -1.0]))

    def forward(self, x):
        return self.linear(x)


class AddSub(nn.Module):
    def forward(self, a, b):
        return a + b, a - b


class Scaled(nn.Module):
    def forward(self, x, scale: float = 2.0):
        return x * scale


class Masked(nn.Module):
    def forward(self, x, mask: Optional[torch.Tensor] = None):
        if mask is None:
            return x + 100
        return x * mask


class Identity(nn.Module):
    def forward(self, x):
        return x


class Transposed(nn.Module):
    def forward(self, x):
        return (x + 1).t().contiguous().t()


class ReturnsInt(nn.Module):
    def forward(self, x) -> int:
        return x.dim()


class ReturnsList(nn.Module):
    def forward(self, x) -> List[torch.Tensor]:
        return [x, x]


class Raises(nn.Module):
    def forward(self, x):
        if bool((x < 0).any()):
            raise ValueError("negative input")
        return x


def linear_signature():
    return json.dumps({
        "inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, 4]}],
        "outputs": [{"name": "y", "datatype": "TYPE_FP32", "shape": [-1, 3]}],
    })


def save(module, name, extra_files=None):
    path = os.path.join(HERE, name)
    torch.jit.script(module.eval()).save(path, _extra_files=extra_files or {})
    print(f"{path}: {os.path.getsize(path)} bytes")


def main():
    torch.manual_seed(0)
    save(Linear(), "linear.pt", {SIGNATURE_FILE: linear_signature()})
    save(Linear(), "linear_bare.pt")
    save(AddSub(), "add_sub.pt")
    save(Scaled(), "scaled.pt")
    save(Masked(), "masked.pt")
    save(Identity(), "identity.pt")
    save(Transposed(), "transposed.pt")
    save(ReturnsInt(), "returns_int.pt")
    save(ReturnsList(), "returns_list.pt")
    save(Raises(), "raises.pt")
    save(Linear(), "bad_signature.pt", {SIGNATURE_FILE: "{not json"})
    state_dict_path = os.path.join(HERE, "state_dict.pt")
    torch.save(Linear().state_dict(), state_dict_path)
    print(f"{state_dict_path}: {os.path.getsize(state_dict_path)} bytes")


if __name__ == "__main__":
    main()
