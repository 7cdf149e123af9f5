"""Published architectures with random weights and small inputs, for the
opset sweep (arch_sweep.py) and its test (test_arch_opsets.py): each
builder returns (net in eval mode, input tensors, input names, output
names). Batch-norm statistics and affine parameters are randomised so
outputs are O(1) rather than near-constant."""
import torch
import torchvision


def _randomise_norms(net, seed=1):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=g) + 0.5)
                if m.affine:
                    m.weight.copy_(torch.rand(c, generator=g) + 0.5)
                    m.bias.copy_(torch.randn(c, generator=g) * 0.1)
    return net.eval()


def _image(n=64):
    return torch.randn(1, 3, n, n, generator=torch.Generator().manual_seed(2))


def _vision(name, size=64, **kw):
    def build():
        torch.manual_seed(0)
        net = getattr(torchvision.models, name)(weights=None, **kw)
        return _randomise_norms(net), (_image(size),), ["x"], ["y"]
    return build


def _tiny_vit():
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(0)
    net = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                            hidden_dim=32, mlp_dim=64, num_classes=10)
    # torchvision zero-initialises the head: random, so the output depends on it
    with torch.no_grad():
        for p in net.heads.parameters():
            p.normal_(0, 0.2)
    return net.eval(), (_image(32),), ["x"], ["y"]


def _mini(kind):
    """torchvision's Swin and ConvNeXt classes at a few layers and small
    widths: the same ops as swin_t and convnext_tiny, exported in a second"""
    def build():
        torch.manual_seed(0)
        if kind == "swin":
            from torchvision.models.swin_transformer import SwinTransformer
            net = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2],
                                  num_heads=[2, 2], window_size=[4, 4], num_classes=10)
            size = 32
        else:
            from torchvision.models.convnext import CNBlockConfig, ConvNeXt
            net = ConvNeXt([CNBlockConfig(16, 32, 2), CNBlockConfig(32, None, 2)],
                           layer_scale=1.0, num_classes=10)
            size = 32
        return net.eval(), (_image(size),), ["x"], ["y"]
    return build


class _Encoder(torch.nn.Module):
    def __init__(self, batch_first, norm_first, activation):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation=activation,
                                                 batch_first=batch_first, norm_first=norm_first)
        self.enc = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(32))

    def forward(self, x):
        return self.enc(x)


class _Decoder(torch.nn.Module):
    """a causal self-attention mask (a constant: torch.triu exports only
    from opset 14) and cross-attention on a memory"""
    def __init__(self, batch_first, t=4):
        super().__init__()
        layer = torch.nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0,
                                                 batch_first=batch_first)
        self.dec = torch.nn.TransformerDecoder(layer, 2)
        self.register_buffer("mask", torch.triu(torch.full((t, t), float("-inf")), diagonal=1))

    def forward(self, tgt, memory):
        return self.dec(tgt, memory, tgt_mask=self.mask)


def _seq(shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _encoder(batch_first, norm_first=False, activation="relu"):
    def build():
        torch.manual_seed(0)
        net = _Encoder(batch_first, norm_first, activation).eval()
        x = _seq((2, 5, 32) if batch_first else (5, 2, 32), 3)
        return net, (x,), ["x"], ["y"]
    return build


def _decoder(batch_first):
    def build():
        torch.manual_seed(0)
        net = _Decoder(batch_first).eval()
        shape = (lambda n: (2, n, 32)) if batch_first else (lambda n: (n, 2, 32))
        return net, (_seq(shape(4), 3), _seq(shape(6), 4)), ["tgt", "memory"], ["y"]
    return build


class _Recurrent(torch.nn.Module):
    def __init__(self, cls, **kw):
        super().__init__()
        self.rnn = cls(8, 16, **kw)
        self.lstm = cls is torch.nn.LSTM

    def forward(self, x):
        y, state = self.rnn(x)
        return (y,) + (tuple(state) if self.lstm else (state,))


def _recurrent(cls, batch_first, bidirectional, layers=1):
    def build():
        torch.manual_seed(0)
        net = _Recurrent(cls, batch_first=batch_first, bidirectional=bidirectional,
                         num_layers=layers).eval()
        x = _seq((2, 7, 8) if batch_first else (7, 2, 8), 5)
        outs = ["y", "h", "c"] if cls is torch.nn.LSTM else ["y", "h"]
        return net, (x,), ["x"], outs
    return build


class _First(torch.nn.Module):
    """a segmentation model's 'out', or a detection model's boxes, scores
    and labels for one image"""
    def __init__(self, net, detection=False):
        super().__init__()
        self.net, self.detection = net, detection

    def forward(self, x):
        if self.detection:
            d = self.net([x[0]])[0]
            return d["boxes"], d["scores"], d["labels"]
        return self.net(x)["out"]


def _wrapped(name, size=64, shape=None, detection=False, **kw):
    def build():
        torch.manual_seed(0)
        mod = torchvision.models.detection if detection else torchvision.models.segmentation
        net = _randomise_norms(_First(getattr(mod, name)(weights=None, weights_backbone=None,
                                                         **kw), detection))
        if detection:  # spread the scores: near-ties make the boxes' order arbitrary
            g = torch.Generator().manual_seed(3)
            with torch.no_grad():
                for part in ("head", "rpn", "roi_heads"):
                    if hasattr(net.net, part):
                        for p in getattr(net.net, part).parameters():
                            fan_in = p[0].numel() if p.dim() > 1 else 10
                            p.copy_(torch.randn(p.shape, generator=g) * 2 / fan_in ** 0.5)
        x = _image(size)
        outs = ["boxes", "scores", "labels"] if detection else ["y"]
        return net, (x,), ["x"], outs
    return build


def _video(name, frames=4):
    def build():
        torch.manual_seed(0)
        net = _randomise_norms(getattr(torchvision.models.video, name)(weights=None))
        x = torch.randn(1, 3, frames, 32, 32, generator=torch.Generator().manual_seed(2))
        return net, (x,), ["x"], ["y"]
    return build


# name -> builder
MODELS = {
    "squeezenet1_1": _vision("squeezenet1_1"),
    "shufflenet_v2_x0_5": _vision("shufflenet_v2_x0_5"),
    "mnasnet0_5": _vision("mnasnet0_5"),
    "efficientnet_b0": _vision("efficientnet_b0"),
    "googlenet": _vision("googlenet", aux_logits=False, init_weights=True),
    "densenet121": _vision("densenet121", size=32),
    "regnet_y_400mf": _vision("regnet_y_400mf"),
    # layer_scale 1 (torchvision's 1e-6 would make the blocks near identities)
    "convnext_tiny": _vision("convnext_tiny", size=32, layer_scale=1.0),
    "convnext_mini": _mini("convnext"),
    "mobilenet_v3_large": _vision("mobilenet_v3_large"),
    "vit_tiny": _tiny_vit,
    "swin_t": _vision("swin_t", size=32),
    "swin_mini": _mini("swin"),
    "transformer_encoder": _encoder(False),
    "transformer_encoder_bf_normfirst_gelu": _encoder(True, True, "gelu"),
    "transformer_decoder": _decoder(False),
    "transformer_decoder_bf": _decoder(True),
    "lstm_2layer": _recurrent(torch.nn.LSTM, False, False, 2),
    "lstm_bidir_bf": _recurrent(torch.nn.LSTM, True, True),
    "gru_bf": _recurrent(torch.nn.GRU, True, False),
    "gru_bidir": _recurrent(torch.nn.GRU, False, True),
}

# further models, for the sweep only (slower or failing)
EXTRA = {
    "inception_v3": _vision("inception_v3", size=80, aux_logits=False, init_weights=True),
    "alexnet": _vision("alexnet", size=64),
    "vgg11_bn": _vision("vgg11_bn", size=32),
    "efficientnet_v2_s": _vision("efficientnet_v2_s"),
    "regnet_x_400mf": _vision("regnet_x_400mf"),
    "lraspp_mobilenet_v3_large": _wrapped("lraspp_mobilenet_v3_large"),
    "deeplabv3_mobilenet_v3_large": _wrapped("deeplabv3_mobilenet_v3_large", aux_loss=False),
    "fcn_resnet50": _wrapped("fcn_resnet50", aux_loss=False),
    "r3d_18": _video("r3d_18"),
    "r2plus1d_18": _video("r2plus1d_18"),
    "s3d": _video("s3d", frames=16),
    "ssdlite320_mobilenet_v3_large": _wrapped("ssdlite320_mobilenet_v3_large", size=320,
                                              detection=True),
    "fasterrcnn_mobilenet_v3_large_320_fpn": _wrapped(
        "fasterrcnn_mobilenet_v3_large_320_fpn", size=128, detection=True),
}
MODELS_ALL = dict(MODELS, **EXTRA)
