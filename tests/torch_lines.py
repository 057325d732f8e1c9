"""The conformance table: one line of PyTorch code per entry, run as written with `torch`
bound to PyTorch and then to lamina (tests/autograd/test_torch_conformance.py).

Names the lines may use (the same values in both libraries; float ones require grad):
x, y (3, 4); z (2, 3, 4); v (4,); u (3,); m (4, 5); bm (2, 4, 5); bn (2, 5, 3);
p (3, 4) positive; s 0-d; sq (3, 3); e (0, 4) empty; i (3, 4) int64 in [0, 5);
j (3, 4) int64 in [1, 5); idx (2,) int64; g (3, 2) int64 < 4; mask (3, 4) bool; t (3,) int64.
A line that must raise names the exception with "!"; a random line ("~") is compared by
shape and dtype only.
"""

LINES = """
# -- creation
torch.zeros(2, 3)
torch.zeros((2, 3))
torch.zeros(2, 3, dtype=torch.float64)
torch.ones(4)
torch.ones(2, 2, dtype=torch.int64)
torch.full((2, 3), 1.5)
torch.full((2,), 7)
torch.full((2,), True)
torch.eye(3)
torch.eye(2, 4)
torch.tril_indices(3, 4)
torch.tril_indices(4, 3, -1)
torch.triu_indices(3, 3, 1)
torch.broadcast_shapes((2, 1), (3,), (1, 1))
torch.broadcast_shapes(2, (3, 1))
torch.broadcast_tensors(x, v)[1]
torch.broadcast_tensors(u.unsqueeze(1), v)[0] * 2
torch.broadcast_shapes((2,), (3,)) !RuntimeError
torch.arange(5)
torch.arange(1, 7, 2)
torch.arange(0, 1, 0.25)
torch.arange(5.0)
torch.linspace(0, 1, 5)
torch.linspace(-1, 1, 4, dtype=torch.float64)
torch.zeros_like(x)
torch.ones_like(i)
torch.full_like(x, 3.0)
torch.empty(2, 3).shape
torch.empty_like(x).dtype
torch.tensor([1, 2, 3])
torch.tensor([1.0, 2.0])
torch.tensor([[1, 2], [3, 4]], dtype=torch.float32)
torch.tensor(3.5)
torch.tensor(True)
torch.tensor([True, False])
torch.tensor([])
torch.as_tensor([1, 2])
torch.tensor([1, 2]).dtype == torch.int64
torch.zeros(0, 3)
x.new_zeros(2, 2)
x.new_ones((3,))
x.new_full((2,), 4.0)
x.new_tensor([1, 2])
i.new_zeros(2)
torch.rand(2, 3) ~
torch.randn(4) ~
torch.randint(0, 10, (3, 2)) ~
torch.randint(5, (4,)) ~
torch.randperm(6) ~
torch.rand_like(x) ~
torch.randn_like(x) ~
torch.randint_like(x, 10) ~
torch.normal(0.0, 1.0, size=(2, 2)) ~
torch.bernoulli(torch.full((3,), 0.5)) ~
torch.multinomial(torch.tensor([0.2, 0.8]), 4, replacement=True) ~
# -- dtypes and conversion
x.float()
x.double()
x.half()
x.long()
x.int()
x.bool()
i.float()
i.to(torch.float64)
x.to(torch.float64)
x.to(y)
x.to("cpu")
x.type(torch.float64)
x.type_as(i)
i.type_as(x)
x.dtype == torch.float32
i.dtype == torch.long
x.is_floating_point()
i.is_floating_point()
x.element_size()
torch.get_default_dtype()
x.detach()
x.clone()
x.cpu()
x.device == torch.device("cpu")
x.requires_grad
x.is_leaf
(x * 2).is_leaf
x.detach().requires_grad
x.tolist()
i.tolist()
s.item()
x.sum().item()
f"{s:.3f}"
format(x.sum(), ".2e")
f"{x:.2f}" !TypeError
f"{i.sum():5d}"
x.numpy() !RuntimeError
x.detach().numpy()
torch.zeros(2).item() !RuntimeError
# -- promotion
i + 1
i + 1.5
i * 2.0
i / 2
i // 2
i % 3
i + x
x + s
x * 2
2 - x
1 / p
x + i.double()
i.to(torch.int32) + i
torch.tensor([1, 2], dtype=torch.int32) + 1
torch.tensor([1.0], dtype=torch.float64) + torch.tensor(1.0)
torch.tensor([1, 2]) + torch.tensor(1.5)
mask + 1
mask & mask
~mask
mask | (x > 0)
mask ^ (x > 0)
i & 3
# -- size and shape
x.size()
x.size(1)
x.size(-1)
x.shape
x.shape[0]
x.dim()
x.ndimension()
x.numel()
z.numel()
e.numel()
len(x)
x.view(4, 3)
x.view(-1)
x.view(2, -1)
z.view(6, 4)
x.view_as(y)
x.t().view(12) !RuntimeError
x.view(5) !RuntimeError
x.reshape(5, -1) !RuntimeError
x @ y !RuntimeError
torch.cat([x, v]) !RuntimeError
x + z[:, :2] !RuntimeError
x.expand(2, 3) !RuntimeError
x.reshape(2, 6)
x.reshape(-1)
x.t().reshape(12)
x.reshape_as(y)
x.contiguous()
x.is_contiguous()
x.t().is_contiguous()
x.t().contiguous()
z.permute(2, 0, 1)
z.permute((1, 2, 0))
x.transpose(0, 1)
z.transpose(0, 2)
z.transpose(-1, -2)
z.transpose(0, 3) !IndexError
x.swapaxes(0, 1)
x.t()
v.t()
x.T
z.mT
z.movedim(0, -1)
x.squeeze()
x.unsqueeze(0)
x.unsqueeze(-1)
x.unsqueeze(1).squeeze(1)
torch.zeros(2, 1, 3, 1).squeeze()
torch.zeros(2, 1, 3, 1).squeeze(1)
torch.zeros(2, 1, 3, 1).squeeze(0)
z.flatten()
z.flatten(1)
z.flatten(0, 1)
z.unflatten(2, (2, 2))
x.unsqueeze(1).expand(3, 2, 4)
v.expand(3, 4)
v.expand(3, -1)
u.unsqueeze(1).expand_as(x)
x.repeat(2, 1)
v.repeat(2, 3)
x.repeat_interleave(2, dim=0)
v.repeat_interleave(2)
torch.tensor([1, 2]).repeat_interleave(torch.tensor([1, 3]))
x.narrow(1, 1, 2)
x.narrow(0, 0, 1)
x.chunk(2, dim=1)
x.chunk(3)
torch.arange(5).chunk(2)
x.split(2, dim=1)
x.split([1, 2], dim=0)
x.split(3, 1)
x.unbind(1)
x.unbind()
x.flip(0)
z.flip(0, 2)
x.roll(1, 1)
x.roll(2)
x.roll((1, 1), (0, 1))
torch.cat([x, y])
torch.cat([x, y], dim=1)
torch.cat((x, y), -1)
torch.cat([x, i])
torch.concat([x, y])
torch.cat([torch.tensor([]), v])
torch.stack([x, y])
torch.stack([x, y], dim=2)
torch.stack([u, u], -1)
torch.hstack([x, y])
torch.hstack([v, v])
torch.vstack([x, y])
torch.vstack([v, v])
x.tril()
x.triu(1)
sq.tril(-1)
torch.triu(z)
torch.diag(v)
torch.diag(sq)
torch.diag(x, 1)
sq.diagonal()
z.diagonal(0, 1, 2)
sq.trace()
# -- indexing
x[0]
x[-1]
x[:, 1]
x[1:, ::2]
x[..., 0]
x[None]
x[mask]
x[x > 0]
x[idx]
x[:, idx]
x[[0, 2]]
z[0, 1:, [0, 2]]
x[5] !IndexError
x.gather(1, g)
z.gather(2, torch.zeros(2, 3, 1, dtype=torch.long))
x.scatter(1, g, 1.5)
x.scatter(1, g, y[:, :2])
x.scatter_add(1, g, y[:, :2])
x.index_select(0, idx)
x.index_select(1, idx)
x.index_add(0, idx, y[:2])
x.index_fill(1, idx, -1.0)
x.masked_fill(mask, 0.0)
x.masked_fill(x < 0, -1)
x.masked_select(mask)
x.masked_select(x > 0)
torch.where(mask, x, y)
torch.where(x > 0, x, 0.0)
torch.where(mask, 1.0, x)
torch.where(mask)
x.where(mask, y)
mask.nonzero()
torch.nonzero(i)
mask.nonzero(as_tuple=True)
(x > 0).argwhere()
# -- elementwise
x.abs()
torch.abs(x)
x.sign()
x.neg()
-x
x.exp()
x.expm1()
p.log()
p.log1p()
p.log2()
p.log10()
p.sqrt()
p.rsqrt()
x.square()
x.pow(2)
x ** 3
p.pow(0.5)
p ** y
2 ** x
p.reciprocal()
x.sin()
x.cos()
x.tanh()
x.sigmoid()
x.relu()
torch.relu(x)
x.erf()
(x * 3).floor()
(x * 3).ceil()
(x * 3).round()
(x * 3).trunc()
(x * 3).frac()
(x * 10).round(decimals=-1)
torch.round(x, decimals=1)
x.fmod(0.3)
x.remainder(0.3)
torch.fmod(x, p)
x % 0.5
i % 3
torch.tensor([-7, 7]).fmod(3)
torch.tensor([-7, 7]).remainder(3)
x.lerp(y, 0.3)
torch.lerp(x, y, p / 3)
x.clamp(-0.5, 0.5)
x.clamp(min=0)
x.clamp(max=0.2)
x.clamp(min=y)
x.clip(-1, 1)
torch.clamp(i, 1, 3)
x.add(y)
x.add(y, alpha=2)
x.sub(y, alpha=0.5)
x.mul(y)
x.div(p)
x.div(2)
i.div(2)
i.div(2, rounding_mode="floor")
i.div(3, rounding_mode="trunc")
torch.tensor([-7, 7]).div(2, rounding_mode="trunc")
torch.tensor([-7.5, 7.5]).div(2, rounding_mode="floor")
x.true_divide(p)
x.detach().floor_divide(0.7)
torch.maximum(x, y)
torch.minimum(x, y)
x.max(y)
torch.max(x, y)
x.atan2(p)
x.asin() if False else (x / 4).asin()
(x / 4).acos()
x.atan()
x.sinh()
x.cosh()
# -- products
x @ m
x.matmul(m)
torch.matmul(x, v)
v @ v
torch.matmul(z, m)
torch.matmul(v, m)
x.mm(m)
torch.mm(x, m)
x.mm(v) !RuntimeError
x.mm(m.double() if x.dtype == torch.float32 else m.float()) !RuntimeError
bm.bmm(bn)
torch.bmm(bm, bn)
m.mv(torch.ones(5, dtype=m.dtype))
torch.mv(x, v)
v.dot(v)
torch.dot(v, torch.ones(4, dtype=v.dtype))
torch.outer(u, v)
u.outer(v)
torch.addmm(u.unsqueeze(1), x, m[:, :1])
torch.addmm(torch.zeros(3, 5, dtype=x.dtype), x, m, beta=0.5, alpha=2)
x.addmm(sq, x)
torch.einsum("ij,jk->ik", x, m)
torch.einsum("ij->ji", x)
torch.einsum("ij->", x)
torch.einsum("i,j->ij", u, v)
torch.einsum("bij,bjk->bik", bm, bn)
torch.einsum("...j,j->...", z, v)
torch.einsum("ij,ij->i", x, y)
torch.einsum("ij,kj", x, y)
# -- reductions
x.sum()
x.sum(0)
x.sum(dim=1)
x.sum(1, keepdim=True)
z.sum((0, 2))
z.sum(dim=(-1, -2))
i.sum()
mask.sum()
torch.sum(x, 1)
x.sum(dtype=torch.float64)
e.sum(0)
x.mean()
x.mean(0)
z.mean((1, 2), keepdim=True)
torch.mean(x, dim=-1)
i.mean() !RuntimeError
x.std()
x.std(1)
x.std(0, unbiased=False)
x.std(1, keepdim=True)
x.std(correction=0)
x.var()
x.var(1)
x.var(dim=0, correction=2)
torch.var(z, (0, 1))
x.prod()
x.prod(1)
x.prod(0, keepdim=True)
i.prod()
torch.tensor([[0.0, 2.0], [3.0, 4.0]], requires_grad=True).prod(1)
x.norm()
x.norm(dim=1)
x.norm(p=1)
x.norm(1, dim=0)
x.norm(float("inf"))
x.norm(3, dim=1, keepdim=True)
torch.norm(x)
x.logsumexp(1)
x.logsumexp(0, keepdim=True)
torch.logsumexp(z, dim=(1, 2))
x.cumsum(1)
x.cumsum(dim=0)
i.cumsum(0)
x.cumprod(1)
torch.cumsum(v, 0)
x.max()
x.min()
x.max(1)
x.max(dim=0)
x.max(1, keepdim=True)
x.min(0)
x.max(1)[1]
x.max(1).values
x.max(1).indices
torch.max(x, 1)
torch.min(x, dim=1, keepdim=True)
z.max(-1)
i.max()
x.amax()
x.amax(1)
z.amax((0, 2))
x.amin(0)
x.argmax()
x.argmax(1)
x.argmax(0, keepdim=True)
x.argmin()
x.argmin(dim=1)
torch.argmax(z, dim=2)
x.sort()
x.sort(0)
x.sort(descending=True)
x.sort(dim=1, descending=True).indices
torch.sort(v)
x.argsort()
x.argsort(0, descending=True)
x.topk(2)
x.topk(2, dim=0)
x.topk(3, largest=False)
torch.topk(v, 1)
x.kthvalue(2)
x.kthvalue(1, 0)
x.kthvalue(2, 1, keepdim=True)
x.median()
x.median(1)
x.median(dim=0)
torch.median(v)
torch.tensor([1, 2, 2, 3, 3, 3, 1]).mode()
torch.tensor([[1.0, 1.0, 2.0], [3.0, 2.0, 2.0]]).mode(1)
mask.all()
mask.any()
mask.all(1)
mask.any(dim=0)
(x > -10).all()
x.all()
torch.any(mask, 1, keepdim=True)
i.count_nonzero()
x.count_nonzero(0)
# -- comparisons
x == y
x.eq(y)
x.ne(0)
x.lt(y)
x.le(0.5)
x.gt(y)
x.ge(s)
x > 0
x < i
i == 2
torch.eq(x, x)
x.isnan()
(x / 0).isinf()
(x / 0).isfinite()
torch.isnan(torch.tensor([1.0, float("nan")]))
x.allclose(x + 1e-9)
torch.allclose(x, y)
x.isclose(x)
x.equal(x.clone())
torch.equal(x, y)
x.logical_not()
mask.logical_and(x > 0)
torch.logical_or(mask, x > 0)
# -- softmax family and activations
x.softmax(dim=1)
x.softmax(0)
x.log_softmax(-1)
torch.softmax(z, dim=-1)
torch.log_softmax(x, 1)
F.softmax(x, dim=1)
F.log_softmax(x, dim=0)
F.relu(x)
# -- functional layers, PyTorch's argument order
F.batch_norm(z, None, None, training=True)
F.batch_norm(x, v.detach(), v.detach().abs() + 1, training=False)
F.batch_norm(x, None, None, v, v, training=True)
F.batch_norm(x, None, None, None, v, training=True)
F.layer_norm(z, (4,), v, v)
F.group_norm(z, 1, u, u)
F.instance_norm(z)
F.local_response_norm(z, 2)
F.pad(z, (1, 2), mode="reflect")
F.pad(z, (1, 1, 2, 0), mode="replicate")
F.pad(x, (2, 0), mode="circular")
F.pad(x, (1, 1), value=0.5)
F.pixel_shuffle(bm.reshape(1, 4, 2, 5), 2)
F.pixel_unshuffle(bm.reshape(1, 2, 4, 5)[..., :4], 2)
F.unfold(bm.reshape(1, 2, 4, 5), 2)
F.fold(m.reshape(1, 4, 5), (2, 6), 2)
F.embedding(i, m.t(), padding_idx=0)
F.one_hot(t, 5)
F.normalize(x, dim=0)
F.cosine_similarity(x, y)
F.pairwise_distance(x, y)
F.bilinear(x, y, bm[:, :4, :4])
F.dropout(x, 0.0)
F.adaptive_max_pool1d(z, 2)
F.adaptive_avg_pool1d(z, 3)
F.max_pool1d(z, 2)
F.avg_pool1d(z, 2)
F.conv1d(z, torch.ones(2, 3, 2, dtype=z.dtype), padding=1)
# -- in place (on copies: a leaf that requires grad cannot be written)
x.clone().add_(1)
x.clone().add_(y, alpha=2)
x.clone().sub_(y)
x.clone().mul_(2)
x.clone().mul_(y)
x.clone().div_(p)
x.clone().clamp_(-0.1, 0.1)
x.clone().zero_()
x.clone().fill_(2.5)
x.clone().copy_(y)
x.clone().copy_(v)
x.clone().masked_fill_(mask, 9.0)
x.clone().index_fill_(0, idx, -2.0)
x.clone().exp_()
x.clone().relu_()
x.clone().normal_().shape
x.clone().uniform_(0, 1).shape
i.clone().add_(1)
i.clone().add_(1.5) !RuntimeError
x.detach().clone().requires_grad_()
# -- empty and 0-d tensors, negative dims
s.exp()
s * x
s.reshape(1)
s.unsqueeze(0)
s.sum()
s.max()
e.reshape(4, 0)
torch.cat([e, x])
e.max(0) !IndexError
e.t()
e.sum(-1, keepdim=True)
x.softmax(-2)
z.flatten(-2)
z.unsqueeze(-4)
z.squeeze(-1)
x.new_empty(2).shape
x.clone().index_add_(0, idx, y[:2])
torch.from_numpy(np.arange(3.0))
torch.empty_like(x).shape
x.add_(1) !RuntimeError
# -- methods built from other ops (composite, slicing, statistics, memory)
x.addcmul(y, p, value=0.5)
x.addcdiv(y, p, value=2)
torch.addcmul(x, y, v)
x.clamp_min(0.1)
x.clamp_max(y)
torch.nan_to_num(torch.where(x > 0, x, float("nan")))
torch.where(x > 0, x, float("inf")).nan_to_num(posinf=3.0, neginf=-3.0)
torch.where(x > 0, x, float("nan")).nansum()
torch.where(x > 0, x, float("nan")).nansum(1, keepdim=True)
torch.where(x > 0, x, float("nan")).nanmean(0)
torch.nansum(torch.where(x > 0, x, float("nan")), dim=0)
(p / 9).logit()
x.sigmoid().logit(eps=0.3)
x.xlogy(p)
(x > 0).float().xlogy(p)
torch.xlogy(x.relu(), p)
x.logaddexp(y)
x.logaddexp2(y)
torch.logaddexp(x, y * 50)
x.hypot(p)
x.deg2rad()
x.rad2deg()
x.detach().sgn()
x.positive()
x.signbit()
p.float_power(2)
p.float_power(y.exp())
x.fmax(y)
x.fmin(y)
torch.where(x > 0, x, float("nan")).fmax(y)
x.copysign(y)
torch.copysign(x, -1.5)
x.detach().heaviside(y.detach())
(p + 1).acosh()
(p + 1).arccosh()
x.erfc()
x.dist(y)
x.dist(y, 1)
torch.dist(x, y, 3)
x.inner(y)
v.inner(v)
torch.inner(z, x)
(sq @ sq.t() + torch.eye(3)).inverse()
x.ravel()
torch.ravel(z)
x.tile((2,))
x.tile((2, 1, 1))
torch.tile(v, (2, 2))
z.select(1, 2)
z.select(-1, 0)
x.tensor_split(2)
z.tensor_split([1, 3], dim=2)
torch.tensor_split(x, 3, dim=1)
x.hsplit(2)
z.vsplit([1])
z.dsplit(2)
x.split_with_sizes([1, 3], 1)
x.take_along_dim(x.argsort(1), 1)
torch.take_along_dim(x, g[:, :1], dim=1)
x.take_along_dim(idx)
z.unfold(2, 2, 1)
z.unfold(0, 1, 1)
v.unfold(0, 3, 2)
x.diff()
x.diff(n=2, dim=0)
z.diff(dim=1, prepend=z[:, :1], append=z[:, -1:])
torch.diff(v)
x.rot90()
z.rot90(3, (1, 2))
torch.rot90(x, 2)
x.sum_to_size(1, 4)
z.sum_to_size(3, 1)
x.index_copy(0, idx, y[:2])
x.clone().index_copy_(1, t, y[:, :3])
x.cummax(1).values
x.cummax(0).indices
x.cummin(1)
torch.cummax(v, 0)
x.aminmax()
x.aminmax(dim=1, keepdim=True)
torch.aminmax(z, dim=0)
x.msort()
x.quantile(0.3)
x.quantile(torch.tensor([0.1, 0.5, 0.9], dtype=x.dtype), dim=1)
x.quantile(0.5, dim=0, keepdim=True)
x.quantile(torch.tensor([0.25, 0.75], dtype=x.dtype), keepdim=True)
x.quantile(0.4, dim=1, interpolation="lower")
x.quantile(0.4, dim=1, interpolation="higher")
x.quantile(0.4, dim=1, interpolation="midpoint")
x.quantile(0.4, dim=1, interpolation="nearest")
torch.quantile(x, 0.5)
i.unique()
i.unique(return_inverse=True, return_counts=True)
torch.unique(i, dim=0)
i.unique_consecutive()
i.flatten().unique_consecutive(return_inverse=True, return_counts=True)
i.flatten().bincount()
i.flatten().bincount(minlength=9)
i.flatten().bincount(weights=x.detach().flatten())
torch.bincount(t)
x.histc(bins=4)
x.histc(bins=3, min=-1, max=1)
torch.histc(z, bins=5)
x.stride()
z.transpose(0, 2).stride()
z[:, 1:].storage_offset()
x.itemsize
z.nbytes
x.is_cpu
x.is_signed()
(x > 0).is_signed()
(x.sigmoid().detach()).bernoulli().shape ~
x.softmax(1).detach().multinomial(2).shape ~
x.conj()
x.resolve_conj()
x.is_conj()
x.real
z.mH
x.H
z.adjoint()
torch.broadcast_tensors(x, v)[0].stride()
x.clone().sin_()
x.clone().cos_()
x.clone().log1p_()
x.clone().exp2_()
p.clone().rsqrt_()
x.clone().sign_()
x.clone().erf_()
x.detach().clone().eq_(y.detach())
x.detach().clone().lt_(0.2)
x.detach().clone().ge_(y.detach())
x.clone().multiply_(y)
x.clone().divide_(p)
x.clone().subtract_(y)
x.clone().negative_()
x.clone().absolute_()
x.clone().cumsum_(1)
x.clone().cumprod_(0)
x.clone().addcmul_(y, p, value=2)
x.clone().addcdiv_(y, p)
x.clone().clamp_min_(0.0)
x.clone().clamp_max_(y)
torch.where(x > 0, x, float("nan")).nan_to_num_()
x.clone().atan2_(y)
x.clone().hypot_(p)
x.clone().copysign_(y)
x.clone().deg2rad_()
x.clone().xlogy_(p)
sq.clone().fill_diagonal_(2.0)
x.clone().fill_diagonal_(-1.0, wrap=True)
torch.zeros(5, 2).fill_diagonal_(1.0, wrap=True)
torch.zeros(3, 3, 3).fill_diagonal_(4.0)
x.clone().random_(0, 5).shape
x.clone().random_(3).shape
x.clone().exponential_().shape
x.clone().log_normal_().shape
x.clone().cauchy_().shape
x.clone().geometric_(0.3).shape
x.arcsinh()
(x / 2).arctanh()
(x + 2).sinc()
torch.sinc(torch.where(x > 0.1, x, 0.0))
x.ldexp(i)
i.gcd(j)
torch.lcm(i, j)
v.vdot(v)
x.kron(y[:2, :2])
torch.kron(v, u)
z[:, :, :3].cross(z[:, :, 1:], dim=2)
torch.cross(sq, sq.t(), dim=0)
torch.linalg.cross(z[:, :, :3], z[:, :, 1:])
x.diag_embed()
v.diag_embed(offset=1)
z.diag_embed(-1, 0, 2)
x.take(i)
x.index_put((idx,), y[:2])
x.index_put((idx, idx), v[:2])
x.index_put((torch.tensor([0, 0, 2]),), y, accumulate=True)
x.clone().index_put_((idx, t[:2]), s, accumulate=True)
x.masked_scatter(mask, y * 2)
x.isreal()
s.is_nonzero()
x.is_same_size(y)
x.is_nonzero() !RuntimeError
torch.nn.functional.relu_(x.clone())
torch.nn.functional.elu_(x.clone(), 0.5)
torch.nn.functional.leaky_relu_(x.clone(), 0.2)
torch.nn.functional.hardtanh_(x.clone(), -0.5, 0.5)
torch.nn.functional.selu_(x.clone())
torch.nn.functional.celu_(x.clone(), 2.0)
torch.nn.functional.threshold_(x.clone(), 0.1, 20.0)
torch.nn.functional.rrelu_(x.clone(), 0.1, 0.3)
torch.nn.functional.hardshrink(x, 0.3)
torch.nn.functional.softshrink(x, 0.3)
torch.nn.functional.rrelu(x, 0.1, 0.3)
torch.nn.functional.rrelu(x, 0.1, 0.3, training=True).shape ~
torch.nn.functional.rms_norm(x, (4,))
torch.nn.functional.rms_norm(z, (3, 4), x, eps=1e-4)
torch.nn.functional.rms_norm(x, (3,)) !RuntimeError
torch.nn.functional.gumbel_softmax(x).shape ~
torch.nn.functional.gumbel_softmax(x, tau=0.5, hard=True, dim=0).shape ~
torch.meshgrid(u, v, indexing="ij")[0]
torch.meshgrid(u, v, indexing="xy")[1]
torch.meshgrid([v, u, v], indexing="ij")[2] * 2
torch.cartesian_prod(u, v)
torch.cartesian_prod(t, idx)
torch.combinations(v)
torch.combinations(u, 3, with_replacement=True)
torch.searchsorted(torch.tensor([0.0, 0.5, 1.0]), x.detach())
torch.searchsorted(x.detach().sort(1).values, y.detach(), right=True)
torch.searchsorted(torch.tensor([1, 3, 5]), 3, side="right")
torch.bucketize(x.detach(), torch.tensor([-0.5, 0.0, 0.5]))
torch.bucketize(i, torch.tensor([1, 3]), right=True, out_int32=True)
torch.isin(i, torch.tensor([1, 2]))
torch.isin(i, j, invert=True)
torch.cdist(x, y)
torch.cdist(z, z[:, :2], p=1)
torch.cdist(x, x)
torch.pdist(x)
torch.pdist(m, p=3)
torch.cosine_similarity(x, y)
torch.cosine_similarity(x, y, dim=0)
torch.atleast_1d(s)
torch.atleast_2d(v)
torch.atleast_3d(x)
torch.atleast_2d(s, v)[0]
torch.column_stack([v, v * 2])
torch.column_stack([x, y])
torch.row_stack([v, v])
torch.dstack([x, y])
torch.block_diag(x, sq, v)
torch.block_diag(s, u)
torch.tensordot(z, m, dims=1)
torch.tensordot(z, m, dims=([2], [0]))
torch.tensordot(z, z, dims=([0, 2], [0, 2]))
torch.tensordot(x, x, dims=2)
torch.std_mean(x)
torch.std_mean(x, 1, keepdim=True)[0]
torch.var_mean(x, dim=0, correction=0)
torch.trapezoid(x)
torch.trapezoid(x, dx=0.5, dim=0)
torch.trapezoid(x, v.detach().sort().values)
torch.diagflat(u)
torch.diagflat(x[:2, :2], 1)
torch.baddbmm(z[:, :, :3].clone(), z, z.transpose(1, 2)[:, :, :3] * 0 + bm[:, :4, :3], beta=0.5, alpha=2)
torch.result_type(x, 1)
torch.result_type(i, 1.5)
torch.result_type(i, x)
torch.can_cast(torch.float64, torch.float32)
torch.can_cast(torch.float32, torch.int64)
torch.can_cast(torch.int64, torch.bool)
torch.are_deterministic_algorithms_enabled()
torch.FloatTensor([1, 2])
torch.LongTensor([[1, 2]])
torch.DoubleTensor([1.5])
torch.BoolTensor([True, False])
torch.ByteTensor([1, 2])
torch.IntTensor([3])
torch.FloatTensor(2, 3).shape
torch.LongTensor(torch.Size([4])).shape
isinstance(x, torch.FloatTensor)
isinstance(x, torch.DoubleTensor)
isinstance(i, torch.LongTensor)
i.type(torch.FloatTensor)
x.type(torch.DoubleTensor)
(x / 4).erfinv()
torch.erfinv(x.sigmoid() - 0.5)
(x / 4).clone().erfinv_()
torch.tensor([1.0, -1.0, 0.0]).erfinv()
torch.cov(x)
torch.cov(x, correction=0)
torch.cov(v)
torch.cov(x, fweights=torch.tensor([1, 2, 1, 3]))
torch.cov(x, aweights=p[0])
torch.cov(x, fweights=torch.tensor([1, 2, 1, 3]), aweights=p[0], correction=2)
torch.corrcoef(x)
torch.corrcoef(z[0])
torch.asarray(x.detach().numpy()).dtype
torch.asarray([1, 2])
torch.asarray(x, dtype=torch.float64, requires_grad=False)
torch.asarray(x, requires_grad=False).requires_grad
torch.asarray(x.detach().numpy(), requires_grad=True).requires_grad
""".strip().splitlines()


def entries() -> list[tuple[str, str]]:
    """(line, mode): mode '' compares values, '~' shape and dtype, '!Name' the exception."""
    out = []
    for raw in LINES:
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        if raw.endswith(" ~"):
            out.append((raw[:-2], "~"))
        elif " !" in raw:
            code, err = raw.rsplit(" !", 1)
            out.append((code, "!" + err))
        else:
            out.append((raw, ""))
    return out

def _words(text: str) -> list[str]:
    return text.split()


# The names issue 31 lists: each must exist (a Tensor method, or a lamina function for the
# joins) and appear in at least one line above.
NAMES = _words("""size dim ndimension numel element_size view view_as reshape reshape_as contiguous
is_contiguous permute transpose swapaxes t T mT squeeze unsqueeze flatten unflatten expand
expand_as repeat repeat_interleave narrow chunk split unbind flip roll cat concat stack hstack
vstack tril triu diag diagonal trace gather scatter scatter_add index_select index_add
masked_fill masked_select where nonzero clamp clip abs sign neg exp expm1 log log1p log2 sqrt
rsqrt square pow reciprocal sin cos tanh sigmoid erf floor ceil round trunc frac fmod
remainder lerp addmm matmul mm bmm mv dot outer einsum sum mean std var prod norm logsumexp
cumsum cumprod max min amax amin argmax argmin sort argsort topk kthvalue median mode all any
eq ne lt le gt ge isnan isinf isfinite allclose equal softmax log_softmax relu float double
half long int bool type type_as item tolist numpy clone detach new_zeros new_ones new_full
new_empty new_tensor zero_ fill_ copy_ add_ sub_ mul_ div_ clamp_ normal_ uniform_
masked_fill_ index_fill_""")
CREATION = _words("""tensor as_tensor from_numpy zeros ones full empty eye arange linspace zeros_like
ones_like full_like empty_like rand randn randint randperm rand_like randn_like randint_like
normal bernoulli multinomial""")
