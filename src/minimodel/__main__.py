"""`python -m minimodel` = `python -m minimodel.train`: a small language model on the KB."""

from minimodel.train import main

raise SystemExit(main())
