"""PyTorch models written the way their authors write them, for the ONNX
importer's tests (export.py exports them; no test imports torch itself).

- Llama: RMSNorm, SwiGLU, rotary embeddings, grouped-query attention through
  F.scaled_dot_product_attention(is_causal=True), K/V repeated with
  repeat_interleave, an untied LM head.
- ViT: a patch-embedding convolution, a class token expanded to the batch,
  learned positions, nn.TransformerEncoderLayer (pre-norm, GELU).
- Bert: token, token-type and position embeddings, an attention_mask input
  turned into an additive bias, a fused QKV projection, post-norm blocks.
- GPT: a decoder whose causal mask is a boolean buffer,
  masked_fill(~tril, -inf), with a biased LM head.
- Pool: a sentence encoder's masked mean pooling over a boolean padding
  mask input, (x * m).sum(1) / m.sum(1), then a mean over the features.
- Mlp: nn.SiLU and nn.GELU(approximate="tanh") between linear layers (the
  dynamo export keeps its weights as external data).
- PadEnc: a boolean key-padding mask input applied as masked_fill(~mask,
  -inf) and as torch.where(mask, scores, -inf).
- SdpaMask: the same mask given to F.scaled_dot_product_attention as its
  boolean attn_mask (both exporters: Where(mask, 0, -inf) added to the
  scores, and after the softmax Where(IsNaN(P), 0, P)), in two pre-norm
  blocks with a GELU MLP.
- PadIds: the padding mask computed in the model from the token ids,
  ids != 0 (Equal and Not), combined with ids < 48 (Less, And), as SDPA's
  boolean attn_mask and for masked mean pooling.
- PadEmb: nn.Embedding(padding_idx=0) whose padded positions reach the loss
  (a plain mean over every token): PyTorch keeps row 0's gradient zero,
  which no exporter records (--param-names carries it).
- MobileNet: MobileNetV2 as torchvision writes it, scaled down: a strided
  stem, inverted residuals (1x1 expansion, 3x3 depthwise, linear 1x1
  projection, a residual where the shape allows), batch norm, nn.ReLU6, a
  1x1 head, adaptive average pooling, flatten, a linear classifier.
"""
import math, torch, torch.nn as nn, torch.nn.functional as F

class RMSNorm(nn.Module):
    def __init__(s, d, eps=1e-6):
        super().__init__(); s.eps = eps; s.weight = nn.Parameter(torch.ones(d))
    def forward(s, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + s.eps) * s.weight

def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)

class LlamaBlock(nn.Module):
    def __init__(s, d=32, heads=4, kv=2, T=8):
        super().__init__()
        s.h, s.kv, s.hd = heads, kv, d // heads
        s.q = nn.Linear(d, d, bias=False); s.k = nn.Linear(d, kv * s.hd, bias=False)
        s.v = nn.Linear(d, kv * s.hd, bias=False); s.o = nn.Linear(d, d, bias=False)
        s.n1 = RMSNorm(d); s.n2 = RMSNorm(d)
        s.gate = nn.Linear(d, 64, bias=False); s.up = nn.Linear(d, 64, bias=False); s.down = nn.Linear(64, d, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, s.hd, 2).float() / s.hd))
        t = torch.arange(T).float(); f = torch.outer(t, inv); emb = torch.cat((f, f), -1)
        s.register_buffer("cos", emb.cos(), persistent=False); s.register_buffer("sin", emb.sin(), persistent=False)
    def forward(s, x):
        B, T, D = x.shape
        h = s.n1(x)
        q = s.q(h).view(B, T, s.h, s.hd).transpose(1, 2)
        k = s.k(h).view(B, T, s.kv, s.hd).transpose(1, 2)
        v = s.v(h).view(B, T, s.kv, s.hd).transpose(1, 2)
        q = q * s.cos + rotate_half(q) * s.sin
        k = k * s.cos + rotate_half(k) * s.sin
        k = k.repeat_interleave(s.h // s.kv, dim=1); v = v.repeat_interleave(s.h // s.kv, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + s.o(a.transpose(1, 2).reshape(B, T, D))
        h = s.n2(x)
        return x + s.down(F.silu(s.gate(h)) * s.up(h))

class Llama(nn.Module):
    def __init__(s, V=50, d=32, L=2, T=8):
        super().__init__()
        s.emb = nn.Embedding(V, d); s.layers = nn.ModuleList([LlamaBlock(d, T=T) for _ in range(L)])
        s.norm = RMSNorm(d); s.head = nn.Linear(d, V, bias=False)
    def forward(s, ids):
        x = s.emb(ids)
        for l in s.layers: x = l(x)
        return s.head(s.norm(x))

class ViT(nn.Module):
    def __init__(s, img=16, p=4, d=32, L=2, C=10):
        super().__init__()
        s.patch = nn.Conv2d(3, d, p, p); n = (img // p) ** 2
        s.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02); s.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        s.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"), L, enable_nested_tensor=False)
        s.norm = nn.LayerNorm(d); s.head = nn.Linear(d, C)
    def forward(s, x):
        x = s.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat((s.cls.expand(x.shape[0], -1, -1), x), 1) + s.pos
        x = s.enc(x)
        return s.head(s.norm(x[:, 0]))

class Bert(nn.Module):
    def __init__(s, V=50, d=32, L=2, T=8, C=3):
        super().__init__()
        s.tok = nn.Embedding(V, d); s.typ = nn.Embedding(2, d); s.pos = nn.Embedding(T, d); s.ln = nn.LayerNorm(d)
        s.layers = nn.ModuleList()
        for _ in range(L):
            s.layers.append(nn.ModuleDict(dict(qkv=nn.Linear(d, 3 * d), o=nn.Linear(d, d), ln1=nn.LayerNorm(d), f1=nn.Linear(d, 64), f2=nn.Linear(64, d), ln2=nn.LayerNorm(d))))
        s.head = nn.Linear(d, C); s.h = 4
    def forward(s, input_ids, token_type_ids, attention_mask):
        B, T = input_ids.shape
        pos = torch.arange(T, device=input_ids.device).unsqueeze(0)
        x = s.ln(s.tok(input_ids) + s.typ(token_type_ids) + s.pos(pos))
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for l in s.layers:
            q, k, v = l["qkv"](x).view(B, T, 3, s.h, -1).permute(2, 0, 3, 1, 4)
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + bias, -1) @ v
            x = l["ln1"](x + l["o"](a.transpose(1, 2).reshape(B, T, -1)))
            x = l["ln2"](x + l["f2"](F.gelu(l["f1"](x))))
        return s.head(x[:, 0])

class GPT(nn.Module):
    def __init__(s, V=40, d=32, T=8, heads=4, L=2):
        super().__init__()
        s.wte = nn.Embedding(V, d); s.wpe = nn.Parameter(torch.randn(T, d) * 0.02); s.h = heads
        s.blocks = nn.ModuleList()
        for _ in range(L):
            s.blocks.append(nn.ModuleDict(dict(ln1=nn.LayerNorm(d), qkv=nn.Linear(d, 3 * d), proj=nn.Linear(d, d), ln2=nn.LayerNorm(d), fc=nn.Linear(d, 4 * d), out=nn.Linear(4 * d, d))))
        s.lnf = nn.LayerNorm(d); s.head = nn.Linear(d, V)
        s.register_buffer("tril", torch.tril(torch.ones(T, T, dtype=torch.bool)))
    def forward(s, idx):
        B, T = idx.shape
        x = s.wte(idx) + s.wpe[:T]
        for b in s.blocks:
            q, k, v = b["qkv"](b["ln1"](x)).split(x.shape[-1], -1)
            q, k, v = (t.view(B, T, s.h, -1).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
            att = att.masked_fill(~s.tril[:T, :T], float("-inf")).softmax(-1)
            x = x + b["proj"]((att @ v).transpose(1, 2).reshape(B, T, -1))
            x = x + b["out"](F.gelu(b["fc"](b["ln2"](x))))
        return s.head(s.lnf(x))

class Pool(nn.Module):
    def __init__(s, V=50, d=32, C=3):
        super().__init__()
        s.tok = nn.Embedding(V, d); s.proj = nn.Linear(d, d); s.head = nn.Linear(d, C)
    def forward(s, ids, mask):
        m = mask[:, :, None].float()
        h = torch.tanh(s.proj(s.tok(ids)))
        pooled = (h * m).sum(1) / m.sum(1)
        return s.head(pooled - pooled.mean(-1, keepdim=True))


def conv_bn(cin, cout, k=3, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU6(inplace=True)) if act else nn.Sequential(*layers)

class InvertedResidual(nn.Module):
    def __init__(s, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        s.use_res = stride == 1 and cin == cout
        layers = [conv_bn(cin, hidden, 1)] if expand != 1 else []
        layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden), conv_bn(hidden, cout, 1, act=False)]
        s.conv = nn.Sequential(*layers)
    def forward(s, x):
        return x + s.conv(x) if s.use_res else s.conv(x)

class MobileNet(nn.Module):
    def __init__(s, C=10):
        super().__init__()
        cfg = [(1, 8, 1, 1), (4, 12, 2, 2), (4, 16, 1, 2)]  # expand, channels, repeats, stride
        layers, cin = [conv_bn(3, 8, 3, 2)], 8
        for t, c, n, st in cfg:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, st if i == 0 else 1, t)); cin = c
        layers.append(conv_bn(cin, 32, 1))
        s.features = nn.Sequential(*layers)
        s.classifier = nn.Linear(32, C)
    def forward(s, x):
        x = F.adaptive_avg_pool2d(s.features(x), (1, 1))
        return s.classifier(torch.flatten(x, 1))


class Mlp(nn.Module):
    def __init__(s, C=5):
        super().__init__()
        s.net = nn.Sequential(nn.Linear(12, 16), nn.SiLU(), nn.Linear(16, 16),
                              nn.GELU(approximate="tanh"), nn.Linear(16, C))
    def forward(s, x):
        return s.net(x)


class PadEnc(nn.Module):
    """A sentence encoder over a boolean key-padding mask input (True: a
    real token): one attention masks its scores with masked_fill(~mask,
    -inf), the other with torch.where(mask, scores, -inf); mean pooling."""
    def __init__(s, V=50, d=32, C=3, h=4):
        super().__init__()
        s.tok = nn.Embedding(V, d); s.qkv1 = nn.Linear(d, 3 * d); s.qkv2 = nn.Linear(d, 3 * d)
        s.head = nn.Linear(d, C); s.h = h
    def attend(s, x, lin, m, where):
        B, T, D = x.shape
        q, k, v = lin(x).view(B, T, 3, s.h, D // s.h).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(D // s.h)
        att = torch.where(m, att, float("-inf")) if where else att.masked_fill(~m, float("-inf"))
        return (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
    def forward(s, ids, mask):
        x = s.tok(ids)
        m = mask[:, None, None, :]
        x = x + s.attend(x, s.qkv1, m, False)
        x = x + s.attend(x, s.qkv2, m, True)
        return s.head(x.mean(1))


class SdpaMask(nn.Module):
    """An encoder whose key-padding mask (True: a real token) is SDPA's
    boolean attn_mask; mean pooling over the tokens."""
    def __init__(s, V=50, d=32, C=3, h=4, layers=2):
        super().__init__()
        s.tok = nn.Embedding(V, d); s.h = h
        s.norm1 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        s.qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers))
        s.proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
        s.norm2 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        s.mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
                              for _ in range(layers))
        s.head = nn.Linear(d, C)
    def forward(s, ids, mask):
        x = s.tok(ids)
        B, T, D = x.shape
        m = mask[:, None, None, :]
        for n1, qkv, proj, n2, mlp in zip(s.norm1, s.qkv, s.proj, s.norm2, s.mlp):
            q, k, v = qkv(n1(x)).view(B, T, 3, s.h, D // s.h).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
            x = x + proj(a.transpose(1, 2).reshape(B, T, D))
            x = x + mlp(n2(x))
        return s.head(x.mean(1))


class PadIds(nn.Module):
    """Padding derived in the model from the ids (pad id 0), as encoders
    without an attention_mask input do."""
    def __init__(s, V=50, d=32, C=3, h=4):
        super().__init__()
        s.tok = nn.Embedding(V, d); s.qkv = nn.Linear(d, 3 * d); s.proj = nn.Linear(d, d)
        s.head = nn.Linear(d, C); s.h = h
    def forward(s, ids):
        mask = ids != 0
        keep = mask & (ids < 48)
        x = s.tok(ids)
        B, T, D = x.shape
        q, k, v = s.qkv(x).view(B, T, 3, s.h, D // s.h).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
        x = x + s.proj(a.transpose(1, 2).reshape(B, T, D))
        m = keep.unsqueeze(-1).float()
        return s.head((x * m).sum(1) / m.sum(1))


class PadEmb(nn.Module):
    """An embedding with padding_idx=0 and mean pooling over every position,
    padded ones included."""
    def __init__(s, V=50, d=16, C=3):
        super().__init__()
        s.tok = nn.Embedding(V, d, padding_idx=0); s.mix = nn.Linear(d, d); s.head = nn.Linear(d, C)
    def forward(s, ids):
        return s.head(torch.tanh(s.mix(s.tok(ids))).mean(1))


class Extrema(nn.Module):
    """Max and min of computed tensors: global max pooling (amax over H and
    W), x.max(dim).values and min(dim).values, torch.maximum and minimum of
    two branches, x.max() of the whole tensor, and a row maximum subtracted
    as a stable log-sum-exp does."""
    def __init__(s, C=10):
        super().__init__()
        s.conv = nn.Conv2d(3, 8, 3, padding=1); s.a = nn.Linear(8, 16); s.b = nn.Linear(8, 16)
        s.head = nn.Linear(16, C)
    def forward(s, x):
        f = s.conv(x)
        g = f.amax(dim=(2, 3))
        h = f.max(dim=3).values.min(dim=2).values
        u = torch.maximum(s.a(g), s.b(h)) + torch.minimum(s.a(h), s.b(g))
        z = u - u.amax(-1, keepdim=True) + f.max()
        return s.head(z + torch.amin(z, dim=-1, keepdim=True))
