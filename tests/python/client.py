"""A second-language client: calls catalog-service and estimator-service from
Python with stubs generated from proto/ at run time (Debian's protoc,
grpc_python_plugin, python3-grpcio, python3-protobuf), proving the contracts
work outside C++. Run by the end-to-end test:

    python3 tests/python/client.py --proto=proto --catalog=HOST:PORT --estimator=HOST:PORT

Prints one line per check and exits 0 only when every check holds."""

import argparse
import glob
import importlib
import os
import subprocess
import sys
import tempfile


def generate_stubs(proto_dir, out_dir):
    protos = sorted(os.path.relpath(p, proto_dir)
                    for p in glob.glob(os.path.join(proto_dir, "**", "*.proto"), recursive=True))
    subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={out_dir}",
                    f"--grpc_python_out={out_dir}",
                    "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin", *protos],
                   check=True)
    # Namespace packages: no __init__.py, so that the generated google.rpc
    # and google.type sit beside the installed google.protobuf.
    sys.path.insert(0, out_dir)


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message)
    if not condition:
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proto", required=True)
    parser.add_argument("--catalog", required=True)
    parser.add_argument("--estimator", required=True)
    args = parser.parse_args()

    import grpc  # python3-grpcio

    with tempfile.TemporaryDirectory() as out_dir:
        generate_stubs(args.proto, out_dir)
        catalog_pb2 = importlib.import_module("modelatlas.catalog.v1.catalog_service_pb2")
        catalog_grpc = importlib.import_module("modelatlas.catalog.v1.catalog_service_pb2_grpc")
        estimator_pb2 = importlib.import_module("modelatlas.estimator.v1.estimator_service_pb2")
        training_pb2 = importlib.import_module("modelatlas.estimator.v1.training_pb2")
        estimator_grpc = importlib.import_module("modelatlas.estimator.v1.estimator_service_pb2_grpc")
        status_pb2 = importlib.import_module("google.rpc.status_pb2")
        details_pb2 = importlib.import_module("google.rpc.error_details_pb2")

        catalog = catalog_grpc.CatalogServiceStub(grpc.insecure_channel(args.catalog))
        model = catalog.GetModel(catalog_pb2.GetModelRequest(name="megatron bert"), timeout=10)
        check(model.name == "models/megatron-bert", f"GetModel by display name: {model.name}")
        check(model.training_chip_hours == 191488, "Megatron-BERT chip-hours: 191488")

        page = catalog.ListModels(catalog_pb2.ListModelsRequest(
            filter='parameters > 1e10 AND domains:"Language"', order_by="parameters desc",
            page_size=5), timeout=10)
        check(len(page.models) == 5 and page.next_page_token != "",
              f"ListModels filtered and ordered: first {page.models[0].display_name}")
        check(all(page.models[i].parameters >= page.models[i + 1].parameters for i in range(4)),
              "ListModels order_by parameters desc")

        try:
            catalog.GetModel(catalog_pb2.GetModelRequest(name="models/no-such-model"), timeout=10)
            check(False, "GetModel of a missing model fails")
        except grpc.RpcError as error:
            check(error.code() == grpc.StatusCode.NOT_FOUND, f"NOT_FOUND: {error.details()}")
            trailers = dict(error.trailing_metadata() or ())
            status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
            info = details_pb2.ErrorInfo()
            found = any(d.Unpack(info) for d in status.details if d.Is(info.DESCRIPTOR))
            check(found and info.reason == "RESOURCE_NOT_FOUND", f"ErrorInfo reason {info.reason}")

        estimator = estimator_grpc.EstimatorServiceStub(grpc.insecure_channel(args.estimator))
        workload = estimator_pb2.InferenceWorkload(context_length_tokens=8192)
        answer = estimator.EstimateInferenceMemory(estimator_pb2.EstimateInferenceMemoryRequest(
            model="Llama 3.1 8B", workload=workload), timeout=10)
        check(answer.lines[0].bytes == 16060522496, f"weights {answer.lines[0].bytes} bytes")
        check(answer.lines[1].bytes == 1073741824, f"KV cache {answer.lines[1].bytes} bytes")
        check(answer.workload.workload.context_length_tokens == 8192,
              f"assumed: {answer.workload.statement}")

        compute = estimator.EstimateTrainingCompute(
            training_pb2.EstimateTrainingComputeRequest(model="BERT-Large-CAS (PTB+WT2+WT103)"),
            timeout=10)
        check(abs(compute.training_compute_flop - 1.5405e20) < 1e12,
              f"training compute {compute.training_compute_flop:.5g} FLOP")

        runnable = [row for message in estimator.ListRunnableModels(
            estimator_pb2.ListRunnableModelsRequest(
                hardware="NVIDIA T4",
                workload=estimator_pb2.InferenceWorkload(context_length_tokens=4096)), timeout=10)
                    for row in message.models]
        check(any(r.model == "models/gpt-2-124m" for r in runnable),
              f"ListRunnableModels streamed {len(runnable)} models")

        # The whole matrix, packed columns: cell k is model k // (H*F),
        # hardware (k // F) % H, format k % F.
        models, hardware, formats, cards = [], [], [], []
        for message in estimator.StreamFitMatrix(estimator_pb2.StreamFitMatrixRequest(
                model_filter='display_name = "GPT-2 (124M)"',
                weight_formats=[estimator_pb2.NUMBER_FORMAT_BF16]), timeout=30):
            hardware.extend(message.hardware)
            formats.extend(message.weight_formats)
            models.extend(message.models)
            cards.extend(message.cards)
        check(len(models) == 1 and len(cards) == len(hardware) * len(formats)
              and sum(1 for c in cards if c == 1) > 100,
              f"StreamFitMatrix streamed {len(cards)} cells for {[m.model for m in models]}")
    print("python client: all checks passed")


if __name__ == "__main__":
    main()
