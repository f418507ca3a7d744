"""Pictures of nets, as Caffe's caffe.draw: a NetParameter (caffe_pb2) as a
Graphviz graph, layers as boxes with their main parameters and blobs as
octagons, arrows bottom -> layer -> top.

draw_net returns the picture's bytes in any format Graphviz's dot writes
(png, svg, pdf, ...; 'dot' gives the graph's own text, with no Graphviz
needed); draw_net_to_file writes it, the format from the file's extension.
get_pydot_graph gives a pydot graph, for those who have pydot.
"""

import os
import subprocess

from .proto import caffe_pb2

LAYER_STYLE = {'shape': 'record', 'fillcolor': '#6495ED', 'style': 'filled'}
NEURON_LAYER_STYLE = {'shape': 'record', 'fillcolor': '#90EE90', 'style': 'filled'}
BLOB_STYLE = {'shape': 'octagon', 'fillcolor': '#E0E0E0', 'style': 'filled'}


def get_edge_label(layer):
    """The label of the arrows out of a layer: the batch size for data
    layers, the number of outputs for learned layers."""
    if layer.type == 'Data':
        return 'Batch %d' % layer.data_param.batch_size
    if layer.type in ('Convolution', 'Deconvolution'):
        return '%d' % layer.convolution_param.num_output
    if layer.type == 'InnerProduct':
        return '%d' % layer.inner_product_param.num_output
    return None


def _first(values, default):
    return values[0] if len(values) else default


def get_layer_lr_mult(layer):
    """The lr_mult of a layer's weights and biases, for learned layers."""
    if layer.type not in ('Convolution', 'Deconvolution', 'InnerProduct'):
        return None
    mults = [p.lr_mult if p.HasField('lr_mult') else 1.0 for p in layer.param]
    while len(mults) < 2:
        mults.append(1.0)
    return mults[0], mults[1]


def get_layer_label(layer, rankdir, display_lrm=False):
    """A layer's label: its name, type and main geometry."""
    sep = '\\n' if rankdir in ('TB', 'BT') else ' '
    parts = [layer.name, '(%s)' % layer.type]
    if layer.type in ('Convolution', 'Deconvolution'):
        p = layer.convolution_param
        k = p.kernel_h or _first(p.kernel_size, 1)
        s = p.stride_h or _first(p.stride, 1)
        pad = p.pad_h or _first(p.pad, 0)
        parts.append('kernel size: %d' % k)
        parts.append('stride: %d' % s)
        parts.append('pad: %d' % pad)
    elif layer.type == 'Pooling':
        p = layer.pooling_param
        parts.append('pool: %s' % caffe_pb2.PoolingParameter.PoolMethod.Name(p.pool))
        parts.append('kernel size: %d' % (p.kernel_h or p.kernel_size))
        parts.append('stride: %d' % (p.stride_h or p.stride))
        parts.append('pad: %d' % (p.pad_h or p.pad))
    lrm = get_layer_lr_mult(layer) if display_lrm else None
    if lrm is not None:
        parts.append('lr mult: %g, %g' % lrm)
    if rankdir in ('TB', 'BT'):
        return sep.join(parts)
    # Left to right: a record's fields across, as a column of lines.
    return '{' + '|'.join(p.replace('{', '\\{').replace('}', '\\}').replace('|', '\\|')
                          .replace('<', '\\<').replace('>', '\\>') for p in parts) + '}'


def choose_color_by_layertype(layertype):
    """The fill colour of a layer's box by its family."""
    if layertype in ('Convolution', 'Deconvolution'):
        return '#FF5050'
    if layertype == 'Pooling':
        return '#FF9900'
    if layertype == 'InnerProduct':
        return '#CC33FF'
    return '#6495ED'


def _in_phase(layer, phase):
    if phase is None:
        return True
    if layer.include:
        return any(not r.HasField('phase') or r.phase == phase for r in layer.include)
    return not any(r.HasField('phase') and r.phase == phase for r in layer.exclude)


def _quote(s):
    # Labels carry DOT's own escapes (\n, a record's \{ \| ...): only
    # quotes are escaped here.
    return '"' + str(s).replace('"', '\\"') + '"'


def _attrs(d):
    return '[' + ', '.join('%s=%s' % (k, _quote(v)) for k, v in d.items()) + ']'


def to_dot(caffe_net, rankdir='LR', label_edges=True, phase=None, display_lrm=False):
    """The Graphviz DOT text of a net."""
    lines = ['digraph %s {' % _quote(caffe_net.name or 'net'),
             '  rankdir=%s;' % _quote(rankdir)]
    edges = []
    blob_version = {}  # a blob written in place gets a new node each time

    def blob_node(name, new=False):
        if new or name not in blob_version:
            blob_version[name] = blob_version.get(name, -1) + 1
            node = '%s_blob_%d' % (name, blob_version[name])
            style = dict(BLOB_STYLE)
            style['label'] = name
            lines.append('  %s %s;' % (_quote(node), _attrs(style)))
        return '%s_blob_%d' % (name, blob_version[name])

    for i, layer in enumerate(caffe_net.layer):
        if not _in_phase(layer, phase):
            continue
        node = 'layer_%d_%s' % (i, layer.name)
        in_place = len(layer.bottom) == len(layer.top) and list(layer.bottom) == list(layer.top) and layer.top
        style = dict(NEURON_LAYER_STYLE if in_place else LAYER_STYLE)
        style['fillcolor'] = style['fillcolor'] if in_place else choose_color_by_layertype(layer.type)
        style['label'] = get_layer_label(layer, rankdir, display_lrm)
        lines.append('  %s %s;' % (_quote(node), _attrs(style)))
        for b in layer.bottom:
            edges.append((blob_node(b), node, None))
        label = get_edge_label(layer) if label_edges else None
        for t in layer.top:
            edges.append((node, blob_node(t, new=True), label))
    for src, dst, label in edges:
        attrs = ' ' + _attrs({'label': label}) if label else ''
        lines.append('  %s -> %s%s;' % (_quote(src), _quote(dst), attrs))
    lines.append('}')
    return '\n'.join(lines) + '\n'


def get_pydot_graph(caffe_net, rankdir, label_edges=True, phase=None, display_lrm=False):
    """The net as a pydot.Dot graph (needs pydot)."""
    import pydot
    return pydot.graph_from_dot_data(to_dot(caffe_net, rankdir, label_edges, phase, display_lrm))[0]


def draw_net(caffe_net, rankdir, ext='png', phase=None, display_lrm=False):
    """The picture of a net as bytes of format ext (Graphviz's dot draws
    it; ext 'dot' gives the DOT text itself)."""
    text = to_dot(caffe_net, rankdir, True, phase, display_lrm)
    if ext in ('dot', 'gv', 'raw'):
        return text.encode('utf-8')
    try:
        p = subprocess.run(['dot', '-T' + ext], input=text.encode('utf-8'),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError:
        raise RuntimeError('drawing a net as %s needs Graphviz\'s dot (Debian: graphviz); '
                           'ext="dot" gives the graph without it' % ext)
    if p.returncode != 0:
        raise RuntimeError('dot -T%s: %s' % (ext, p.stderr.decode('utf-8', 'replace').strip()))
    return p.stdout


def draw_net_to_file(caffe_net, filename, rankdir='LR', phase=None, display_lrm=False):
    """Writes the picture of a net to filename, in the format its extension
    names (.png, .svg, .pdf, .dot, ...)."""
    ext = os.path.splitext(filename)[1].lstrip('.') or 'png'
    with open(filename, 'wb') as f:
        f.write(draw_net(caffe_net, rankdir, ext, phase, display_lrm))
