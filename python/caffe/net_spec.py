"""Nets written as Python code, as Caffe's net_spec: layers.X(...) makes a
layer of type X and returns its tops, which later layers take as bottoms;
NetSpec names them; to_proto writes the NetParameter.

    n = caffe.NetSpec()
    n.data, n.label = L.Data(source='train_lmdb', backend=P.Data.LMDB,
                             batch_size=64, ntop=2)
    n.ip = L.InnerProduct(n.data, num_output=10)
    n.loss = L.SoftmaxWithLoss(n.ip, n.label)
    open('train.prototxt', 'w').write(str(n.to_proto()))

Keyword arguments fill the layer's parameter message of its type
(num_output goes to inner_product_param), or LayerParameter's own fields
(param, include, loss_weight, ...); dicts fill messages, lists repeated
fields. ntop sets the number of tops (0 returns the layer itself),
in_place=True makes the tops the bottoms, name names the layer.
"""

from collections import OrderedDict, Counter

from .proto import caffe_pb2


def param_name_dict():
    """Layer type -> the name of its parameter field of LayerParameter
    ('Convolution' -> 'convolution_param'), from caffe_pb2."""
    out = {}
    for field in caffe_pb2.LayerParameter.DESCRIPTOR.fields:
        if not field.name.endswith('_param') or field.message_type is None:
            continue
        msg = field.message_type.name
        if msg.endswith('Parameter'):
            out[msg[:-len('Parameter')]] = field.name
    # Types whose parameters are another type's message.
    for typ, other in (('Deconvolution', 'Convolution'),):
        if other in out:
            out.setdefault(typ, out[other])
    return out


def _is_repeated(field):
    """Whether a field is repeated: protobuf 6's upb descriptors say so with
    is_repeated and have no label; older runtimes have only label."""
    if hasattr(field, 'is_repeated'):
        return field.is_repeated
    return field.label == field.LABEL_REPEATED


def _fill(msg, name, value):
    """Sets field name of msg from a Python value: a scalar, a dict (a
    message), or a list of either (a repeated field)."""
    field = msg.DESCRIPTOR.fields_by_name.get(name)
    if field is None:
        raise AttributeError('%s has no field %r' % (msg.DESCRIPTOR.name, name))
    repeated = _is_repeated(field)
    is_msg = field.message_type is not None
    if repeated:
        values = value if isinstance(value, (list, tuple)) else [value]
        target = getattr(msg, name)
        for v in values:
            if is_msg:
                _fill_message(target.add(), v)
            else:
                target.append(v)
    elif is_msg:
        _fill_message(getattr(msg, name), value)
    else:
        setattr(msg, name, value)


def _fill_message(msg, value):
    if isinstance(value, dict):
        for k, v in value.items():
            _fill(msg, k, v)
    else:
        msg.CopyFrom(value)


class Top(object):
    """A top of a layer that layers.X returned, for later layers to take."""

    def __init__(self, fn, n):
        self.fn = fn
        self.n = n

    def to_proto(self):
        """A NetParameter of this top's layer and every layer it depends on."""
        return to_proto(self)

    def _to_proto(self, layers, names, autonames):
        return self.fn._to_proto(layers, names, autonames)


class Function(object):
    """A layer of a net spec: its type, bottoms (Tops) and parameters."""

    def __init__(self, type_name, inputs, params):
        self.type_name = type_name
        for i, inp in enumerate(inputs):
            if not isinstance(inp, Top):
                raise TypeError('%s input %d is not a Top (type is %s)' % (type_name, i, type(inp)))
        self.inputs = inputs
        self.params = dict(params)
        self.ntop = self.params.pop('ntop', 1)
        self.in_place = self.params.pop('in_place', False)
        if self.in_place and self.ntop != len(inputs):
            raise ValueError('%s in_place with %d tops and %d bottoms' % (type_name, self.ntop, len(inputs)))
        self.tops = tuple(Top(self, i) for i in range(self.ntop))

    def _top_name(self, top, names, autonames):
        if top not in names:
            autonames[top.fn.type_name] += 1
            names[top] = top.fn.type_name + str(autonames[top.fn.type_name])
        return names[top]

    def _layer_name(self, names, autonames):
        if 'name' in self.params:
            return self.params['name']
        if self.tops:
            return self._top_name(self.tops[0], names, autonames)
        if self not in names:
            autonames[self.type_name] += 1
            names[self] = self.type_name + str(autonames[self.type_name])
        return names[self]

    def _to_proto(self, layers, names, autonames):
        if self in layers:
            return
        bottoms = []
        for inp in self.inputs:
            inp._to_proto(layers, names, autonames)
            bottoms.append(layers[inp.fn].top[inp.n])
        layer = caffe_pb2.LayerParameter()
        layer.type = self.type_name
        layer.bottom.extend(bottoms)
        if self.in_place:
            layer.top.extend(bottoms)
        else:
            layer.top.extend(self._top_name(t, names, autonames) for t in self.tops)
        layer.name = self._layer_name(names, autonames)
        pnames = param_name_dict()
        for k, v in self.params.items():
            if k == 'name':
                continue
            if k.endswith('param') or k in caffe_pb2.LayerParameter.DESCRIPTOR.fields_by_name:
                _fill(layer, k, v)
            else:
                field = pnames.get(self.type_name)
                if field is None:
                    raise AttributeError('%s: no parameter message for layer type %r (argument %r)'
                                         % (layer.name, self.type_name, k))
                _fill(getattr(layer, field), k, v)
        layers[self] = layer


class NetSpec(object):
    """Named tops: n.name = top names the top (and its layer) name."""

    def __init__(self):
        super(NetSpec, self).__setattr__('tops', OrderedDict())

    def __setattr__(self, name, value):
        self.tops[name] = value

    def __getattr__(self, name):
        try:
            return self.tops[name]
        except KeyError:
            raise AttributeError(name)

    def __setitem__(self, key, value):
        self.__setattr__(key, value)

    def __getitem__(self, item):
        return self.__getattr__(item)

    def __delitem__(self, name):
        del self.tops[name]

    def keys(self):
        return list(self.tops.keys())

    def vals(self):
        return list(self.tops.values())

    def to_proto(self):
        names = {v: k for k, v in self.tops.items()}
        autonames = Counter()
        layers = OrderedDict()
        for top in self.tops.values():
            top._to_proto(layers, names, autonames)
        net = caffe_pb2.NetParameter()
        net.layer.extend(layers.values())
        return net


def to_proto(*tops):
    """A NetParameter of the layers the tops need, in order."""
    layers = OrderedDict()
    autonames = Counter()
    names = {}
    for top in tops:
        top._to_proto(layers, names, autonames)
    net = caffe_pb2.NetParameter()
    net.layer.extend(layers.values())
    return net


class Layers(object):
    """layers.X(*bottoms, **params): a layer of type X."""

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)

        def make(*args, **kwargs):
            fn = Function(name, args, kwargs)
            if fn.ntop == 0:
                return fn
            if fn.ntop == 1:
                return fn.tops[0]
            return fn.tops
        make.__name__ = name
        return make


class Parameters(object):
    """params.X.NAME: the value NAME of an enum of XParameter
    (params.Pooling.MAX)."""

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        msg = getattr(caffe_pb2, name + 'Parameter', None)
        if msg is None:
            raise AttributeError('caffe.proto has no %sParameter' % name)

        class Enums(object):
            def __getattr__(self, value):
                if value.startswith('__'):
                    raise AttributeError(value)
                return getattr(msg, value)
        return Enums()


layers = Layers()
params = Parameters()
