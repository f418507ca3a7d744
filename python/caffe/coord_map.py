"""Coordinate maps between the tops of a net spec, as Caffe's
caffe.coord_map: how a spatial position in one top corresponds to one in
another through convolutions, poolings, deconvolutions, crops and
element-wise layers, and crop(), which writes the Crop layer that aligns
a top with a reference (fully convolutional nets).

A map is (axis, a, b): along the spatial axes after axis, coordinate x of
the first top is a * x + b in the second. a and b are numbers, or arrays
(one per spatial axis) where a layer's geometry differs between axes.
"""

import numpy as np

from .net_spec import layers as L


class UndefinedMapException(RuntimeError):
    """A layer has no coordinate map (InnerProduct, global pooling, ...)."""


class AxisMismatchException(RuntimeError):
    """Two maps work on different axes."""


# Layers that keep every spatial position where it is.
PASS_THROUGH = {
    'AbsVal', 'BatchNorm', 'Bias', 'BNLL', 'Concat', 'Dropout', 'Eltwise', 'ELU', 'Exp', 'Log', 'LRN',
    'MVN', 'Power', 'PReLU', 'ReLU', 'Scale', 'Sigmoid', 'Softmax', 'Split', 'TanH', 'Threshold',
    'Clip', 'Swish', 'Silence',
}


def _geometry(value, default):
    """A kernel/stride/pad parameter as a number or an array per axis."""
    if value is None:
        return default
    if isinstance(value, (list, tuple)):
        if len(value) == 0:
            return default
        if len(value) == 1:
            return value[0]
        return np.array(value, dtype=np.float64)
    return value


def conv_params(fn):
    """(axis, kernel, stride, pad, dilation) of a Convolution,
    Deconvolution or Pooling function of a net spec."""
    p = dict(fn.params)
    for k in ('convolution_param', 'pooling_param'):
        if k in p:
            p.update(p.pop(k))
    if p.get('global_pooling'):
        raise UndefinedMapException('%s with global_pooling has no coordinate map' % fn.type_name)
    if 'kernel_h' in p or 'kernel_w' in p:
        ks = np.array([p.get('kernel_h', 1), p.get('kernel_w', 1)], dtype=np.float64)
    else:
        ks = _geometry(p.get('kernel_size'), 1)
    if 'stride_h' in p or 'stride_w' in p:
        stride = np.array([p.get('stride_h', 1), p.get('stride_w', 1)], dtype=np.float64)
    else:
        stride = _geometry(p.get('stride'), 1)
    if 'pad_h' in p or 'pad_w' in p:
        pad = np.array([p.get('pad_h', 0), p.get('pad_w', 0)], dtype=np.float64)
    else:
        pad = _geometry(p.get('pad'), 0)
    dilation = _geometry(p.get('dilation'), 1)
    return p.get('axis', 1), ks, stride, pad, dilation


def crop_params(fn):
    p = dict(fn.params)
    p.update(p.pop('crop_param', {}))
    return p.get('axis', 2), _geometry(p.get('offset'), 0)


def coord_map(fn):
    """The map from a layer's bottoms to its tops."""
    t = fn.type_name
    if t in ('Convolution', 'Pooling', 'Im2col'):
        axis, ks, stride, pad, dil = conv_params(fn)
        return axis, 1.0 / stride, (pad - (ks - 1) * dil / 2.0) / stride
    if t == 'Deconvolution':
        axis, ks, stride, pad, dil = conv_params(fn)
        return axis, stride, (ks - 1) * dil / 2.0 - pad
    if t == 'Crop':
        axis, offset = crop_params(fn)
        return axis - 1, 1, -offset
    if t in PASS_THROUGH:
        return None, 1, 0
    raise UndefinedMapException('layer type %s has no coordinate map' % t)


def compose(base_map, next_map):
    """The map of base_map followed by next_map."""
    ax1, a1, b1 = base_map
    ax2, a2, b2 = next_map
    if ax1 is None:
        ax = ax2
    elif ax2 is None or ax1 == ax2:
        ax = ax1
    else:
        raise AxisMismatchException('maps on axes %s and %s' % (ax1, ax2))
    return ax, a2 * a1, a2 * b1 + b2


def inverse(coord_map):
    """The map back."""
    ax, a, b = coord_map
    return ax, 1.0 / a, -b / a


def _ancestors(top):
    """Every top the coordinates of top come from through mapped layers,
    with the map from it to top, nearest first."""
    found = [(top, (None, 1, 0))]
    seen = {top}
    i = 0
    while i < len(found):
        t, m = found[i]
        i += 1
        fn = t.fn
        if not fn.inputs:
            continue
        try:
            step = coord_map(fn)
        except UndefinedMapException:
            continue
        for bottom in fn.inputs:
            if bottom in seen:
                continue
            seen.add(bottom)
            found.append((bottom, compose(step, m)))
    return found


def coord_map_from_to(top_from, top_to):
    """The map from top_from's coordinates to top_to's, through their
    nearest common ancestor. Raises RuntimeError where they share no
    spatially connected ancestor."""
    to_maps = dict((t, m) for t, m in _ancestors(top_to))
    for t, from_map in _ancestors(top_from):
        if t in to_maps:
            return compose(inverse(from_map), to_maps[t])
    raise RuntimeError('no common spatially connected ancestor of the two tops (a layer between '
                       'them has no coordinate map)')


def crop(top_from, top_to):
    """A Crop layer that crops top_from to top_to's extent, aligned: the
    two must have the same scale and top_from must cover top_to."""
    ax, a, b = coord_map_from_to(top_from, top_to)
    assert np.all(a == 1), 'scale mismatch in crop: %s' % (a,)
    assert np.all(b <= 0), 'negative offset in crop: %s' % (b,)
    assert np.all(np.round(b) == b), 'fractional offset in crop: %s' % (b,)
    offset = [int(v) for v in np.atleast_1d(-np.round(b))]
    return L.Crop(top_from, top_to, crop_param=dict(axis=ax + 1, offset=offset))
