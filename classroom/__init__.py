"""Teaching a class from a clone of the series: the class server, the class report, slides and a copy
for students. Never installed (students get tiledlab/ only); run from the clone's root as
`python -m classroom COMMAND`:

  slides        an offline slide deck built from the notebooks, with the key's answers (slides.py)
  student-copy  the series without the key or the tests, to hand out (student_copy.py)
  hub           a JupyterHub class server, each student on their own working copy (hub.py,
                jupyterhub_config.py)
  class-report  who passed which exercise, from what each student's checks recorded (report.py)
  nbgrader      an nbgrader course: the key in solution regions, checks as graded tests (grading.py)

classroom imports tiledlab; tiledlab never imports classroom (tests/test_layers.py checks it).
"""
