oflow-compile model.onnx --target cpu -O 0 --optimizer sgd --lr 0.1 -o train && ./train --steps 1 --dump-grads grads --export trained.onnx --check-memory --data g980_x1=g980_x1.npy
