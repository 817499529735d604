"""Test helpers: small models (such as `.tflite` files) built without their frameworks."""
