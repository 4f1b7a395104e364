"""`tfyarn sweep`: hyperparameter searches whose trials are ordinary tfyarn jobs, searched by Optuna."""
