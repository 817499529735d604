"""TorchScript importer: scripted and traced networks saved to disk, imported, compiled
for GENERIC and compared with torch; the one-line errors for files that are not
TorchScript, corrupt files, missing input shapes and unsupported aten ops."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import synapc

torch = pytest.importorskip(
    "torch",
    reason="the TorchScript importer needs the torch extra: pip install -e .[torch]",
)

# torch 2.13 deprecates torch.jit.script / trace / save in favour of torch.export
pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated:DeprecationWarning")
nn = torch.nn
F = torch.nn.functional

# -- the networks ----------------------------------------------------------------------


class BasicBlock(nn.Module):
    """ResNet basic block: two 3x3 conv + BatchNorm, projection shortcut when needed."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNetSmall(nn.Module):
    """A ResNet-18-style network in miniature, with a standalone BatchNorm too."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 7, 2, 3, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1),
        )
        self.layer1 = BasicBlock(16, 16, 1)
        self.layer2 = BasicBlock(16, 32, 2)
        self.layer3 = BasicBlock(32, 64, 2)
        self.post_bn = nn.BatchNorm2d(64)  # not after a convolution: a real multiply-add
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer3(self.layer2(self.layer1(self.stem(x))))
        x = self.pool(self.post_bn(x + 0.5))
        x = torch.flatten(x, 1)
        return F.softmax(self.fc(x), dim=1)


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, reduced: int) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(channels, reduced, 1)
        self.fc2 = nn.Conv2d(reduced, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = F.adaptive_avg_pool2d(x, 1)
        scale = F.hardsigmoid(self.fc2(F.relu(self.fc1(scale))))
        return x * scale


class InvertedResidual(nn.Module):
    """MobileNetV2/V3 block: expand 1x1, depthwise 3x3, squeeze-excite, project 1x1."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int, se: bool) -> None:
        super().__init__()
        hidden = cin * expand
        self.use_residual = stride == 1 and cin == cout
        layers: list[nn.Module] = [
            nn.Conv2d(cin, hidden, 1, bias=False),
            nn.BatchNorm2d(hidden),
            nn.Hardswish(),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
        ]
        if se:
            layers.append(SqueezeExcite(hidden, max(hidden // 4, 8)))
        layers += [nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.block(x)
        return x + y if self.use_residual else y


class MobileNetSmall(nn.Module):
    """A MobileNetV2-style network: depthwise convolutions, hard-swish, squeeze-excite,
    ReLU6, dropout and a classifier on a flattened view."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish()
        )
        self.blocks = nn.Sequential(
            InvertedResidual(16, 16, 1, 2, se=True),
            InvertedResidual(16, 24, 2, 4, se=False),
            InvertedResidual(24, 24, 1, 3, se=True),
            InvertedResidual(24, 40, 2, 3, se=True),
        )
        self.head = nn.Sequential(nn.Conv2d(40, 96, 1), nn.Hardswish())
        self.classifier = nn.Sequential(
            nn.Linear(96, 64), nn.SiLU(), nn.Dropout(0.2), nn.Linear(64, classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.head(self.blocks(self.stem(x)))
        x = x.mean((2, 3))
        return self.classifier(x.view(x.size(0), -1))


def _double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1),
        nn.ReLU(inplace=True),
    )


class UNetSmall(nn.Module):
    """A two-level UNet: max-pool down, ConvTranspose2d up, bilinear and nearest
    F.interpolate, skip connections joined with torch.cat."""

    def __init__(self) -> None:
        super().__init__()
        self.enc1 = _double_conv(3, 8)
        self.enc2 = _double_conv(8, 16)
        self.bottom = _double_conv(16, 32)
        self.up2 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.dec2 = _double_conv(32, 16)
        self.dec1 = _double_conv(16 + 8, 8)
        self.side = nn.Conv2d(32, 4, 1)
        self.out = nn.Conv2d(8 + 4, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        b = self.bottom(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        up1 = F.interpolate(d2, scale_factor=2.0, mode="bilinear", align_corners=False)
        d1 = self.dec1(torch.cat([up1, e1], dim=1))
        side = F.interpolate(self.side(b), size=d1.shape[2:], mode="nearest")
        return torch.sigmoid(self.out(torch.cat([d1, side], dim=1)))


# -- helpers ---------------------------------------------------------------------------


def _randomize_batch_norms(model: nn.Module) -> nn.Module:
    """Non-trivial running statistics and affine parameters, then eval mode."""
    generator = torch.Generator().manual_seed(1)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            c = module.num_features
            module.running_mean.copy_(torch.randn(c, generator=generator) * 0.1)
            module.running_var.copy_(torch.rand(c, generator=generator) + 0.5)
            module.weight.data.copy_(torch.rand(c, generator=generator) + 0.5)
            module.bias.data.copy_(torch.randn(c, generator=generator) * 0.1)
    return model.eval()


def _relative_error(
    model_path: Path, reference: nn.Module, shape: tuple[int, ...]
) -> float:
    """Import `model_path`, run it on GENERIC and return the max abs error relative to
    max(1, max |reference|)."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        expected = reference(torch.from_numpy(x)).numpy()
    model = synapc.import_model(model_path, input_shapes=[shape])
    (actual,) = synapc.compile(model, "GENERIC").run([x])
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    return float(np.max(np.abs(actual - expected)) / max(1.0, np.max(np.abs(expected))))


# -- networks --------------------------------------------------------------------------


def test_scripted_resnet_with_batch_norm(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = _randomize_batch_norms(ResNetSmall())
    path = tmp_path / "resnet.torchscript"
    torch.jit.script(net).save(str(path))
    assert _relative_error(path, net, (1, 3, 32, 32)) <= 1e-4


def test_traced_mobilenet_v2_style(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = _randomize_batch_norms(MobileNetSmall())
    path = tmp_path / "mobilenet.pt"
    torch.jit.trace(net, torch.zeros(1, 3, 32, 32)).save(str(path))
    assert _relative_error(path, net, (1, 3, 32, 32)) <= 1e-4


def test_traced_unet(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = _randomize_batch_norms(UNetSmall())
    path = tmp_path / "unet.pth"
    torch.jit.trace(net, torch.zeros(1, 3, 32, 32)).save(str(path))
    assert _relative_error(path, net, (1, 3, 32, 32)) <= 1e-4


def test_scripted_unet_resolves_interpolate_control_flow(tmp_path: Path) -> None:
    """Scripted F.interpolate compiles to prim::If / prim::Loop on the input rank; the
    importer resolves them from the static shapes."""
    torch.manual_seed(0)
    net = _randomize_batch_norms(UNetSmall())
    path = tmp_path / "unet_scripted.pt"
    torch.jit.script(net).save(str(path))
    assert _relative_error(path, net, (1, 3, 16, 16)) <= 1e-4


def test_input_shapes_by_name(tmp_path: Path) -> None:
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()).eval()
    path = tmp_path / "small.pt"
    torch.jit.trace(net, torch.zeros(1, 3, 8, 8)).save(str(path))
    model = synapc.import_model(path, input_shapes={"input": [1, 3, 12, 12]})
    assert model.inputs[0].shape == (1, 3, 12, 12)
    assert model.outputs[0].shape == (1, 4, 10, 10)


class KitchenSink(nn.Module):
    """Scripted shape arithmetic (``x.shape`` unpacking, a loop appending tensors to a
    list), chunk / select / slice / pad / permute, LayerNorm, Linear on 4-D, GELU,
    rsub with alpha, stack, a "same"-padded convolution, BatchNorm1d, reductions."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(4)
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.conv = nn.Conv2d(4, 4, 3, padding="same")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        a, b = x.chunk(2, dim=1)
        y = torch.cat([b, a], 1) + x[:, 0:1] * x.select(1, 2).unsqueeze(1)
        y = F.pad(y, [1, 1, 1, 1])[:, :, 1:-1, 1:-1]
        t = self.fc(self.ln(y.permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
        t = F.gelu(t) + F.leaky_relu(t, 0.1) - torch.rsub(t, 2.0, alpha=0.5)
        parts: list[torch.Tensor] = []
        for i in range(c):
            parts.append(t[:, i] * float(i + 1))
        s = torch.stack(parts, 1)
        z = self.conv(s).reshape(n, c, h * w)
        z = self.bn(z).mean(-1) + z.sum(-1, dtype=torch.float32) / (h * w)
        pooled = F.adaptive_avg_pool2d(s, [2, 2]).flatten(1).sum(1, keepdim=True)
        return torch.softmax(z, dim=-1) + pooled


def test_scripted_kitchen_sink(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = KitchenSink().eval()
    net.bn.running_mean.normal_()
    net.bn.running_var.fill_(2.0)
    path = tmp_path / "sink.pt"
    torch.jit.script(net).save(str(path))
    assert _relative_error(path, net, (1, 4, 8, 8)) <= 1e-4


class _Lambda(nn.Module):
    def __init__(self, function, *modules: nn.Module) -> None:
        super().__init__()
        self.function = function
        self.layers = nn.ModuleList(modules)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.function(self.layers, x)


_TRACED_OPS = {
    "transpose_slice_step": lambda m, x: x.transpose(1, 3)[:, 1:7:2].contiguous() * 2,
    "split_unbind": lambda m, x: torch.stack(x.split([1, 3], 1)[1].unbind(1)[:2], 2),
    "pad_reflect_expand_repeat": lambda m, x: (
        F.pad(x, (1, 1, 1, 1), mode="reflect")[:, :1].expand(-1, 4, -1, -1)
        + x.repeat(1, 1, 2, 2)[:, :, 1:11, 1:11]
    ),
    "matmul": lambda m, x: torch.matmul(x, x.transpose(2, 3)) / 8,
    "pools": lambda m, x: (
        F.avg_pool2d(x, 3, 2, 1)
        + F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)
        + F.adaptive_max_pool2d(x, 4)
    ),
    "arithmetic": lambda m, x: (
        torch.add(x, x * x, alpha=0.5)
        - torch.sub(x, 1.0, alpha=2)
        + (1 - x)
        + x / (x * x + 1)
        + torch.pow(x, 2)
        + torch.rsqrt(x * x + 1)
        + torch.maximum(x, x * 0.5)
        + x.clamp(-0.5, 0.5)
        + x.clamp(min=0.1)
    ),
    "activations": lambda m, x: (
        F.elu(x)
        + F.silu(x) * torch.tanh(x)
        + F.hardsigmoid(x) * F.hardswish(x)
        + F.relu6(x)
        + F.log_softmax(x, 1)
    ),
    "resize": lambda m, x: (
        F.interpolate(x, size=(12, 12), mode="nearest-exact")
        + F.interpolate(x, size=(12, 12), mode="bilinear", align_corners=True)
        + F.interpolate(x, scale_factor=1.5, mode="bilinear")
    ),
    "conv1d_transpose_outpad": lambda m, x: (
        m[0](x.flatten(2)).sum() + m[1](x).mean((2, 3), keepdim=True)
    ),
    "inplace": lambda m, x: x.clone().add_(1).mul_(2).relu_(),
}
_TRACED_MODULES = {
    "conv1d_transpose_outpad": lambda: [
        nn.Conv1d(4, 3, 3, padding=1),
        nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
    ]
}


@pytest.mark.parametrize("name", list(_TRACED_OPS))
def test_traced_ops(tmp_path: Path, name: str) -> None:
    torch.manual_seed(0)
    net = _Lambda(_TRACED_OPS[name], *_TRACED_MODULES.get(name, list)()).eval()
    path = tmp_path / f"{name}.pt"
    torch.jit.trace(net, torch.zeros(1, 4, 8, 8)).save(str(path))
    assert _relative_error(path, net, (1, 4, 8, 8)) <= 1e-4


# -- errors ----------------------------------------------------------------------------

_NOT_TORCHSCRIPT = r"not a TorchScript archive; only TorchScript is supported"


def _one_line_error(
    path: Path, input_shapes: Sequence[Sequence[int]] | None = ((1, 3, 8, 8),)
) -> str:
    """The message of the SynapcError importing `path` raises, checked to be one line
    that starts with the path."""
    with pytest.raises(synapc.SynapcError) as info:
        synapc.import_model(path, input_shapes=input_shapes)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    return message


def test_state_dict_is_not_torchscript(tmp_path: Path) -> None:
    path = tmp_path / "weights.pt"
    torch.save(nn.Conv2d(3, 4, 3).state_dict(), path)
    message = _one_line_error(path)
    assert "not a TorchScript archive; only TorchScript is supported" in message
    assert "torch.jit.script(model).save(path)" in message
    assert "torch.jit.trace(model, example).save(path)" in message


def test_pickled_module_is_not_torchscript(tmp_path: Path) -> None:
    path = tmp_path / "model.pth"
    torch.save(nn.Sequential(nn.Conv2d(3, 4, 3)), path)
    assert "not a TorchScript archive" in _one_line_error(path)


def test_legacy_pickle_is_not_torchscript(tmp_path: Path) -> None:
    path = tmp_path / "legacy.pt"
    torch.save({"w": torch.zeros(2)}, path, _use_new_zipfile_serialization=False)
    assert "not a TorchScript archive" in _one_line_error(path)


@pytest.mark.parametrize(
    "content", [b"this is not a model at all", b"PK\x03\x04truncated"], ids=["text", "zip"]
)
def test_corrupt_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.torchscript"
    path.write_bytes(content)
    assert "corrupt TorchScript archive" in _one_line_error(path)


def test_truncated_torchscript_archive(tmp_path: Path) -> None:
    good = tmp_path / "good.pt"
    torch.jit.script(nn.Conv2d(3, 4, 3)).save(str(good))
    path = tmp_path / "cut.pt"
    path.write_bytes(good.read_bytes()[:-200])
    assert "corrupt TorchScript archive" in _one_line_error(path)


def test_missing_input_shapes(tmp_path: Path) -> None:
    path = tmp_path / "small.pt"
    torch.jit.script(nn.Conv2d(3, 4, 3)).save(str(path))
    message = _one_line_error(path, input_shapes=None)
    assert "TorchScript records no input shapes" in message
    assert "input_shapes=" in message


def test_wrong_number_of_input_shapes(tmp_path: Path) -> None:
    path = tmp_path / "small.pt"
    torch.jit.script(nn.Conv2d(3, 4, 3)).save(str(path))
    message = _one_line_error(path, input_shapes=[[1, 3, 8, 8], [1, 3, 8, 8]])
    assert "2 shapes for 1 forward arguments" in message


def test_torch_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "small.pt"
    torch.jit.script(nn.Conv2d(3, 4, 3)).save(str(path))
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert "pip install torch==2.13.0" in _one_line_error(path)


class _Unsupported(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.erf(x) + 1


def test_unsupported_aten_op_names_the_op_and_line(tmp_path: Path) -> None:
    path = tmp_path / "erf.pt"
    torch.jit.script(_Unsupported()).save(str(path))
    message = _one_line_error(path)
    assert "aten::erf" in message
    assert "not supported" in message
    assert "test_torchscript_import.py" in message


def test_data_dependent_control_flow(tmp_path: Path) -> None:
    class DataDependent(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * int(x.sum())

    path = tmp_path / "data_dependent.pt"
    torch.jit.script(DataDependent()).save(str(path))
    message = _one_line_error(path)
    assert "aten::Int" in message
    assert "computed from the input data" in message
