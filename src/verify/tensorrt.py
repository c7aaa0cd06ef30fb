# cudaup-verify-tensorrt
"""Exports a small CNN from torch to ONNX, builds a TensorRT engine from it, runs it on the GPU,
compares its outputs with torch's, and times both. Prints one JSON line."""
import json
import os
import statistics
import sys
import tempfile
import time

r = {}


def err(e):
    return "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")


def main():
    a = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    batch, iters = int(a.get("batch", 32)), int(a.get("iters", 50))
    try:
        import tensorrt as trt
    except Exception as e:
        r["installed"] = False
        r["error"] = err(e)
        return
    r["installed"] = True
    r["version"] = trt.__version__
    import torch
    r["torch"] = torch.__version__
    if not torch.cuda.is_available():
        r["error"] = "torch sees no GPU"
        return
    dev = torch.device("cuda", 0)
    r["gpu"] = torch.cuda.get_device_name(0)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.Conv2d(64, 128, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(128, 10),
    ).to(dev).eval()
    x = torch.randn(batch, 3, 64, 64, device=dev)
    r["input"] = list(x.shape)
    with torch.inference_mode():
        ref = model(x)
    with tempfile.TemporaryDirectory(prefix="cudaup-trt-") as d:
        path = os.path.join(d, "small.onnx")
        try:
            torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                              opset_version=17, dynamo=False)
            r["exporter"] = "torchscript"
        except TypeError:
            torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                              opset_version=17)
            r["exporter"] = "default"
        with open(path, "rb") as f:
            onnx_bytes = f.read()
    r["onnx_bytes"] = len(onnx_bytes)
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    try:
        network = builder.create_network(0)
    except TypeError:
        network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(onnx_bytes):
        r["error"] = "the ONNX parser refused the model: " + "; ".join(
            str(parser.get_error(i)) for i in range(parser.num_errors))
        return
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)
    t = time.monotonic()
    plan = builder.build_serialized_network(network, config)
    r["build_seconds"] = time.monotonic() - t
    if plan is None:
        r["error"] = "TensorRT could not build an engine (see its log above)"
        return
    engine = trt.Runtime(logger).deserialize_cuda_engine(plan)
    context = engine.create_execution_context()
    out = torch.empty_like(ref)
    for i in range(engine.num_io_tensors):
        name = engine.get_tensor_name(i)
        is_input = engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT
        context.set_tensor_address(name, (x if is_input else out).data_ptr())
    stream = torch.cuda.current_stream()

    def run_trt():
        context.execute_async_v3(stream.cuda_stream)

    def run_torch():
        with torch.inference_mode():
            model(x)

    run_trt()
    torch.cuda.synchronize()
    scale = float(ref.abs().max())
    r["max_rel_err"] = float((out - ref).abs().max()) / (scale if scale > 0 else 1.0)

    def median_ms(fn):
        for _ in range(5):
            fn()
        times = []
        for _ in range(iters):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(stream)
            fn()
            e.record(stream)
            e.synchronize()
            times.append(s.elapsed_time(e))
        return statistics.median(times)

    r["batch"] = batch
    r["trt_ms"] = median_ms(run_trt)
    r["torch_ms"] = median_ms(run_torch)


try:
    main()
except Exception as e:
    r["error"] = err(e)
print(json.dumps(r))
