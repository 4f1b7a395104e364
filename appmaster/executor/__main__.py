import sys

from appmaster import skeinimport

skeinimport.prepare()  # before skein is imported

from appmaster.executor.main import main  # noqa: E402

sys.exit(main())
