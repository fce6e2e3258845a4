"""A minimal Django project for the foreign-application gallery: the admin over a shop's orders (bench/foreign.py)."""
